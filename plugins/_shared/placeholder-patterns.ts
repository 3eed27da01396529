// Placeholder syntaxes of the common i18n formats, and a tokenizer that finds them in a text.
// Shared by the placeholders check (which compares them) and by checks that must ignore what is
// inside a placeholder (numbers in `%1$s`, braces in `{0}`).
import { MASK_CHAR, maskSpans } from './mask-spans.js'
import { keepRecentScans } from './recent-scans.js'

export const PLACEHOLDER_FORMATS = [
  'printf', // %s %d %1$s %.2f %@ %lld ; %% is a literal percent sign
  'python', // %(name)s
  'qt', // %1 %2 (Qt, Windows); off by default: Turkish writes percentages as %50
  'brace', // {0} {name} {count, plural, ...} (top level only)
  'double-brace', // {{name}} {{ name | filter }}
  'dollar-brace', // ${name}
  'percent-brace', // %{name}
  'percent-name', // %name%
  'i18next-nesting', // $t(key)
  'colon', // :name (Rails, Laravel); off by default: "10:30", "Note:x"
  'dollar-paren', // $(name) (Azure DevOps, Makefiles, VS Code snippets)
  'dollar-name-dollar', // $name$ (WebExtension i18n, Visual Studio templates)
  'dollar-name', // $name (shell, PHP, Perl); off by default: "$USD", and detected from the source
  'entity', // &brandName; (DTD entities); character references (&amp; &nbsp; &#160;) are text
  'lisp', // ~a ~s ~d ~% (Common Lisp format); ~~ is a literal tilde; off by default: "~approx"
  'at-name', // @name@ (Autotools, Gettext templates); off by default: e-mail-like text
] as const
export type PlaceholderFormat = (typeof PLACEHOLDER_FORMATS)[number]

/** Formats too close to ordinary text to look for in every string: a pipeline names them, or the source reveals them (placeholder-detection.ts). */
export const OPT_IN_PLACEHOLDER_FORMATS: readonly PlaceholderFormat[] = ['qt', 'colon', 'dollar-name', 'entity', 'lisp', 'at-name']

export const DEFAULT_PLACEHOLDER_FORMATS: PlaceholderFormat[] = PLACEHOLDER_FORMATS.filter((f) => !OPT_IN_PLACEHOLDER_FORMATS.includes(f))

export interface Placeholder {
  /** The placeholder as written. */
  text: string
  start: number
  end: number
  format: PlaceholderFormat | 'custom'
  /** What must match between source and translation (spacing and position normalized). */
  key: string
  /** printf: the explicit argument position (`%2$s` -> 2). */
  position?: number
}

const PRINTF_CONVERSION = /^(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGaAcCsSpn@]$/
// Flags: - + 0 # ' (thousands grouping, POSIX) and space. A space flag counts only when no letter
// follows the conversion and no number comes just before the `%`: "50% done", "50 % e 20 %"
// (Italian "and") are percentages in prose, "Count: % d" is a placeholder.
// The width starts with 1-9: a leading 0 is a flag. `[-+0#]*\d+` matched the same texts but tried
// every split of a run of zeros between flags and width (quadratic on `%` and 50,000 zeros).
const PRINTF = /%(?:(\d+)\$)?[-+0#' ]*(?:[1-9]\d*|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t|q|I64|I32)?[diouxXeEfFgGaAcCsSpn@]/g

const AFTER_NUMBER = /\p{N}[\s\u00A0\u202F]?$/u

interface RegexFormat {
  format: PlaceholderFormat
  /** Every match contains this: a text without it is not scanned for the format. */
  needs: string
  re: RegExp
  key(m: RegExpExecArray): string | undefined
  position?(m: RegExpExecArray): number | undefined
}

const trimKey = (s: string) => s.replace(/\s+/g, ' ').trim()

// Order matters: longer, more specific syntaxes claim their text before the generic ones.
const REGEX_FORMATS: RegexFormat[] = [
  // Spacing inside is free, around filters too: `{{ name|upper }}` is `{{name | upper}}`.
  { format: 'double-brace', needs: '{{', re: /\{\{[^{}\n]+\}\}/g, key: (m) => `{{${trimKey(m[0].slice(2, -2)).replace(/ ?\| ?/g, ' | ')}}}` },
  { format: 'dollar-brace', needs: '${', re: /\$\{[^{}\n]+\}/g, key: (m) => `\${${trimKey(m[0].slice(2, -1))}}` },
  { format: 'percent-brace', needs: '%{', re: /%\{[A-Za-z_][\w.-]*\}/g, key: (m) => m[0] },
  { format: 'i18next-nesting', needs: '$t(', re: /\$t\([^()\n]*\)/g, key: (m) => m[0].replace(/\s+/g, '') },
  { format: 'dollar-paren', needs: '$(', re: /\$\([A-Za-z_][\w.-]*\)/g, key: (m) => m[0] },
  { format: 'dollar-name-dollar', needs: '$', re: /\$[A-Za-z_]\w*\$/g, key: (m) => m[0] },
  { format: 'at-name', needs: '@', re: /(?<![\w@])@[A-Za-z_][\w-]*@/g, key: (m) => m[0] },
  { format: 'entity', needs: '&', re: /(?<![\p{L}\p{N}])&[A-Za-z_][\w.-]*;/gu, key: (m) => (isCharacterEntity(m[0].slice(1, -1)) ? undefined : m[0]) },
  // Before printf: in `~%Au revoir`, `~%` is the directive and `%A` no conversion.
  { format: 'lisp', needs: '~', re: /~(?:[\d,']*[:@]{0,2}[AaSsDdBbOoXxRrPpCcFfEeGg$](?![\p{L}\p{N}])|[%&|])/gu, key: (m) => m[0] },
  { format: 'python', needs: '%(', re: /%\([^()\n]+\)[-+0# ]*(?:[1-9]\d*)?(?:\.\d+)?[diouxXeEfFgGcrsa]/g, key: (m) => m[0] },
  {
    format: 'percent-name',
    needs: '%',
    re: /%([A-Za-z_][\w.-]*)%(?!%)/g,
    // `%d%` is printf followed by a percent sign, not a named placeholder.
    key: (m) => (m[1]!.length >= 2 && !PRINTF_CONVERSION.test(m[1]!) ? m[0] : undefined),
  },
  {
    format: 'printf',
    needs: '%',
    re: PRINTF,
    key: (m) => {
      if (m[0].includes(' ') && (/\p{L}/u.test(m.input[m.index + m[0].length] ?? '') || AFTER_NUMBER.test(m.input.slice(Math.max(0, m.index - 2), m.index)))) return undefined
      return m[1] ? m[0].replace(`${m[1]}$`, '') : m[0]
    },
    position: (m) => (m[1] ? Number(m[1]) : undefined),
  },
  { format: 'qt', needs: '%', re: /%(\d{1,2})(?![\d$])/g, key: (m) => m[0], position: (m) => Number(m[1]) },
  { format: 'colon', needs: ':', re: /(?<![\w:/\\.@])[:][A-Za-z_]\w*/g, key: (m) => m[0] },
  // After the other `$` formats: `${x}`, `$(x)`, `$x$`, `$t(x)` are claimed already. `$5` is a price.
  { format: 'dollar-name', needs: '$', re: /(?<![\w$\\])\$[A-Za-z_]\w*/g, key: (m) => m[0] },
]

// Character references stand for one character and may be written as that character: they are
// text, not placeholders. Named entities other than these (`&brandShortName;`) are placeholders.
const CHARACTER_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos', 'nbsp', 'shy', 'ensp', 'emsp', 'thinsp', 'zwnj', 'zwj', 'lrm', 'rlm', 'ndash', 'mdash', 'lsquo', 'rsquo', 'sbquo', 'ldquo', 'rdquo', 'bdquo', 'laquo', 'raquo', 'lsaquo', 'rsaquo', 'hellip', 'bull', 'middot', 'copy', 'reg', 'trade', 'deg', 'plusmn', 'times', 'divide', 'euro', 'pound', 'yen', 'cent', 'curren', 'sect', 'para', 'micro', 'frac12', 'frac14', 'frac34', 'sup1', 'sup2', 'sup3', 'iexcl', 'iquest', 'szlig', 'eth', 'thorn', 'ETH', 'THORN', 'larr', 'rarr', 'uarr', 'darr', 'harr', 'check', 'hyphen', 'dash', 'minus', 'prime', 'Prime', 'dagger', 'Dagger', 'permil', 'ordf', 'ordm', 'not', 'macr', 'acute', 'cedil', 'uml', 'brvbar'])
const ACCENTED_LETTER = /^[A-Za-z](?:acute|grave|circ|uml|tilde|ring|cedil|slash|lig|caron|ogon|dot|macr|breve)$/
export function isCharacterEntity(name: string): boolean {
  return CHARACTER_ENTITIES.has(name) || ACCENTED_LETTER.test(name) || /^#(?:\d+|[xX][0-9A-Fa-f]+)$/.test(name)
}

// Python str.format may convert the value before formatting it: `{value!r}` (repr), `!s` (str),
// `!a` (ascii), then an optional spec (`{value!r:>10}`). The conversion is part of the key, as the
// `r` of `%(name)r` is: `repr` shows a string in quotes, so `{value}` for `{value!r}` prints
// something else. The spec stays free, as it is for `{0:N2}`.
const POSITIONAL_BRACE = /^(![rsa](?=:|$))?(?::[^{}\s][^{}]*)?$/
const BRACE_NAME = /^\s*([A-Za-z_][\w.-]*|\d+)(?:(![rsa])(?=:|$)|\s*(?=[,:]|$))(?:[,:][\s\S]*)?$/

export interface FindPlaceholdersOptions {
  formats?: readonly PlaceholderFormat[]
  /** Extra patterns (global regular expressions); they claim text before the built-in formats. */
  custom?: readonly RegExp[]
}

// Every built-in format starts with one of these characters; a text without any has none of
// them. Most UI strings have no placeholder, and four checks ask for each text (bench).
const PLACEHOLDER_START = /[%{$:&~@]/

// Three checks ask for the same text's placeholders with the default options in one pipeline
// run: the last few answers are kept (bounded), and handed out as frozen arrays.
const recentDefaults = keepRecentScans((text: string) => scanPlaceholders(text, {}), { max: 256 })

/** Placeholders of the given formats in a text, in order of position. */
export function findPlaceholders(text: string, options: FindPlaceholdersOptions = {}): Placeholder[] {
  if (!options.custom?.length && !PLACEHOLDER_START.test(text)) return []
  if (options.formats || options.custom) return scanPlaceholders(text, options)
  return recentDefaults(text) as Placeholder[]
}

/** Made once, not per text (a comparator made per call is compiled again after each full GC). */
const byStart = (a: Placeholder, b: Placeholder) => a.start - b.start

function scanPlaceholders(text: string, options: FindPlaceholdersOptions): Placeholder[] {
  const formats = new Set(options.formats ?? DEFAULT_PLACEHOLDER_FORMATS)
  const found: Placeholder[] = []
  let work = text
  for (const re of options.custom ?? []) {
    re.lastIndex = 0
    // One pattern's matches are blanked out together: masking the text once per match was quadratic.
    const claimed: Placeholder[] = []
    for (const m of work.matchAll(re)) {
      if (m[0]) claimed.push({ text: m[0], start: m.index!, end: m.index! + m[0].length, format: 'custom', key: m[0] })
    }
    for (const p of claimed) found.push(p)
    if (claimed.length) work = maskSpans(work, claimed)
  }
  // `%%` is an escaped percent sign in printf, Python and Qt: never the start of a placeholder.
  work = work.replace(/%%/g, MASK_CHAR + MASK_CHAR)
  // `~~` likewise in Lisp format strings.
  if (formats.has('lisp')) work = work.replace(/~~/g, MASK_CHAR + MASK_CHAR)
  for (const f of REGEX_FORMATS) {
    if (!formats.has(f.format) || !work.includes(f.needs)) continue
    // The matches of one format are found in the text as the earlier formats left it, and
    // blanked out together (they never overlap): one new string per format, not per match.
    const scanned = work
    const claimed: Placeholder[] = []
    f.re.lastIndex = 0
    for (let m = f.re.exec(scanned); m; m = f.re.exec(scanned)) {
      if (m[0].includes(MASK_CHAR)) continue
      const key = f.key(m)
      if (key === undefined) continue
      claimed.push({ text: m[0], start: m.index, end: m.index + m[0].length, format: f.format, key, position: f.position?.(m) })
    }
    if (claimed.length === 0) continue
    for (const p of claimed) found.push(p)
    work = maskSpans(work, claimed)
  }
  if (formats.has('brace')) for (const p of topLevelBraces(work, text)) found.push(p)
  return found.sort(byStart)
}

/**
 * `{name}` groups at brace depth 0. An ICU argument such as `{count, plural, one {# item} other
 * {# items}}` is one placeholder named `count`: what is nested inside belongs to the ICU check.
 * Groups whose content is not a name (`{ a: 1 }`, `{中文}`) are not placeholders.
 */
function topLevelBraces(work: string, text: string): Placeholder[] {
  const out: Placeholder[] = []
  let depth = 0
  let start = -1
  for (let i = 0; i < work.length; i++) {
    const ch = work[i]
    if (ch === '{') {
      if (depth === 0) start = i
      depth++
    } else if (ch === '}' && depth > 0) {
      depth--
      if (depth === 0) {
        const inner = work.slice(start + 1, i)
        const m = BRACE_NAME.exec(inner)
        if (m) {
          const raw = text.slice(start, i + 1)
          out.push({ text: raw, start, end: i + 1, format: 'brace', key: `{${m[1]}${m[2] ?? ''}}` })
        } else {
          // Python/Rust `{}` and `{:.2f}` take the next argument: only their count (and conversion) can be compared.
          const p = POSITIONAL_BRACE.exec(inner)
          if (p) out.push({ text: text.slice(start, i + 1), start, end: i + 1, format: 'brace', key: `{${p[1] ?? ''}}` })
        }
      }
    }
  }
  return out
}

/** The text with all placeholders of the given formats blanked out (same length). */
export function maskPlaceholders(text: string, options: FindPlaceholdersOptions = {}): string {
  return maskSpans(text, findPlaceholders(text, options))
}

/** How a placeholder is named in a message: ICU arguments by their name (`{count, …}`), a Python conversion as written. */
export function displayPlaceholder(p: Placeholder): string {
  return p.format === 'brace' && /[,:]/.test(p.text) && !p.key.includes('!') ? `${p.key.slice(0, -1)}, …}` : p.text
}
