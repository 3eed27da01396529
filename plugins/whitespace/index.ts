// Whitespace: the translation keeps the source's leading and trailing whitespace and its number
// of line breaks, adds no doubled spaces, and no invisible characters the source lacks. What is
// legitimate is not flagged: French and Swiss typography's (narrow) no-break spaces before
// `: ; ! ?`, inside « » and in numbers; no-break spaces after short prepositions (Czech, Polish,
// Russian); ZWNJ/ZWJ in Persian, Arabic and Indic scripts and in emoji; zero-width spaces as word
// breaks in Thai, Khmer, Lao, Myanmar and CJK; direction marks in right-to-left text; and the
// absence of spaces around CJK and Thai text.
import { defineMessages, definePlugin, type FindingInput, type Item } from '../../src/engine/types.js'
import { isRtl, isSpaceless } from '../_shared/language-traits.js'

const LINE_BREAK = /\r\n|\r|\n|\u2028|\u2029|\\n/g
const NO_BREAK_SPACES = new Set(['\u00a0', '\u202f', '\u2007', '\u2009', '\u200a'])
const SPACE_RUN = /[ \u00a0\u202f\u2007\u2009\u200a]{2,}/g
const WORD_BREAKING = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const JOINING = /[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Tibetan}\p{Script=Myanmar}\p{Script=Khmer}\p{Extended_Pictographic}\p{Emoji_Modifier}\u{FE0F}\u{20E3}]/u
const BIDI_CONTROLS = /[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/
const INVISIBLE = /[\u00a0\u202f\u2007\u2009\u200a\u2000-\u2006\u2008\u205f\u3000\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g

const NAMES: Record<string, string> = {
  '\u00a0': 'NO-BREAK SPACE', '\u202f': 'NARROW NO-BREAK SPACE', '\u2007': 'FIGURE SPACE', '\u2009': 'THIN SPACE', '\u200a': 'HAIR SPACE',
  '\u205f': 'MEDIUM MATHEMATICAL SPACE', '\u3000': 'IDEOGRAPHIC SPACE', '\u200b': 'ZERO WIDTH SPACE', '\u200c': 'ZERO WIDTH NON-JOINER',
  '\u200d': 'ZERO WIDTH JOINER', '\u2060': 'WORD JOINER', '\ufeff': 'BYTE ORDER MARK', '\u200e': 'LEFT-TO-RIGHT MARK', '\u200f': 'RIGHT-TO-LEFT MARK',
  '\u061c': 'ARABIC LETTER MARK',
}
const nameOf = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}${NAMES[ch] ? ` ${NAMES[ch]}` : ''}`

function describe(ws: string): string {
  if (!ws) return 'none'
  const breaks = (ws.match(LINE_BREAK) ?? []).length
  const spaces = ws.replace(LINE_BREAK, '').length
  return [breaks && `${breaks} line break${breaks > 1 ? 's' : ''}`, spaces && `${spaces} space${spaces > 1 ? 's' : ''}`].filter(Boolean).join(' and ')
}

const normalize = (ws: string) => ws.replace(LINE_BREAK, '\n').replace(/[^\S\n]/g, ' ')
const breaksIn = (ws: string) => (ws.match(LINE_BREAK) ?? []).length

/** Whitespace (a byte order mark aside) at the start or the end of a text; scanned from that end. */
const EDGE_SPACE = /[^\S\ufeff]/
export function edgeWhitespace(text: string, where: 'Leading' | 'Trailing'): string {
  if (where === 'Leading') {
    let i = 0
    while (i < text.length && EDGE_SPACE.test(text[i]!)) i++
    return text.slice(0, i)
  }
  let i = text.length
  while (i > 0 && EDGE_SPACE.test(text[i - 1]!)) i--
  return text.slice(i)
}

/** What `legitimate` asks of the whole text, computed at most once per check (not per character). */
const { messages, report } = defineMessages({
  'leading-whitespace': { severity: 'error', meaning: 'The translation starts with other whitespace than the source (only line breaks count in spaceless scripts; with `leadingTrailing`).', text: (d: { found: string; expected: string }) => `Leading whitespace differs from the source: ${d.found} instead of ${d.expected}` },
  'trailing-whitespace': { severity: 'error', meaning: 'The translation ends with other whitespace than the source (only line breaks count in spaceless scripts; with `leadingTrailing`).', text: (d: { found: string; expected: string }) => `Trailing whitespace differs from the source: ${d.found} instead of ${d.expected}` },
  'line-breaks': { severity: 'error', meaning: 'The translation has another number of line breaks inside it than the source (with `lineBreaks`).', text: (d: { found: number; expected: number }) => `The translation has ${d.found} line break${d.found === 1 ? '' : 's'}; the source has ${d.expected}` },
  'doubled-space': { severity: 'error', meaning: 'The translation has more runs of two or more spaces between words than the source (with `doubleSpaces`).', text: 'Doubled space' },
  'invisible-character': { severity: 'error', meaning: 'The translation has an invisible character (zero-width, directional, soft hyphen...) the source does not and its script does not need (with `invisibles`).', text: (d: { ch: string }) => `The translation contains ${nameOf(d.ch)}, which the source does not` },
})

interface TextTraits { spaceless(): boolean; rtl(): boolean }

function textTraits(text: string, item: Item): TextTraits {
  let spaceless: boolean | undefined
  let rtl: boolean | undefined
  return {
    spaceless: () => (spaceless ??= isSpaceless(item.targetLanguage, text)),
    rtl: () => (rtl ??= isRtl(item.targetLanguage, text)),
  }
}

// One to three letters (with their marks) right before a no-break space, tested on the few
// characters before it rather than on the whole text up to it (which was quadratic).
const SHORT_WORD_AT_START = /(?:^|[^\p{L}\p{M}])[\p{L}\p{M}]{1,3}$/u
const SHORT_WORD = /[^\p{L}\p{M}][\p{L}\p{M}]{1,3}$/u
/** Three letters of two code units each and the character before them fit in this many. */
const SHORT_WORD_WINDOW = 10

/** Whether an invisible character at `i` has a typographic reason to be there. */
function legitimate(text: string, i: number, traits: TextTraits): boolean {
  const ch = text[i]!
  const before = text.slice(Math.max(0, i - 2), i)
  const after = text.slice(i + 1, i + 3)
  const prev = [...before].pop() ?? ''
  const next = [...after][0] ?? ''
  const near = (re: RegExp) => re.test(prev) || re.test(next)
  if (NO_BREAK_SPACES.has(ch)) {
    // Before or after punctuation and symbols (« », : ; ! ?, %, €, dashes), in or after numbers
    // (1 000, 10 km, p. 5), after short words (Czech v, Polish w, Russian и, French M.).
    if (!prev || !next || near(/[\p{P}\p{S}\p{N}]/u)) return true
    const from = Math.max(0, i - SHORT_WORD_WINDOW)
    return (from === 0 ? SHORT_WORD_AT_START : SHORT_WORD).test(text.slice(from, i))
  }
  switch (ch) {
    case '\u3000':
      return traits.spaceless() || near(WORD_BREAKING)
    case '\u200b':
    case '\u2060':
      return near(WORD_BREAKING) || near(JOINING)
    case '\u200c':
    case '\u200d':
      return near(JOINING) || near(WORD_BREAKING)
    default:
      return BIDI_CONTROLS.test(ch) && traits.rtl()
  }
}

/**
 * Runs of spaces between the first and the last visible character, not at a line's edge (module-
 * level: a closure made per string is compiled again after each full GC).
 */
function innerSpaceRuns(text: string): RegExpExecArray[] {
  // Between the first and the last visible character (not a slice and trim per run).
  const [first, last] = contentBounds(text)
  const runs: RegExpExecArray[] = []
  if (first === -1) return runs
  for (const m of text.matchAll(SPACE_RUN)) {
    const start = m.index
    const end = start + m[0].length
    // Indentation and alignment at line edges are the leading/trailing check's concern.
    if (first < start && last >= end && !/[\r\n]/.test(text[start - 1] ?? '') && !/[\r\n]/.test(text[end] ?? '')) runs.push(m)
  }
  return runs
}

/** Offsets of the first and the last character that is not whitespace (as `trim` sees it); -1 when none. */
function contentBounds(text: string): [number, number] {
  const first = text.search(/\S/)
  if (first === -1) return [-1, -1]
  let last = text.length - 1
  while (/\s/.test(text[last]!)) last--
  return [first, last]
}

export default definePlugin({
  name: 'whitespace',
  description: 'Leading/trailing whitespace, line breaks, doubled spaces and invisible characters match the source.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      leadingTrailing: { type: 'boolean', default: true, description: 'Leading and trailing whitespace match the source.' },
      lineBreaks: { type: 'boolean', default: true, description: 'The translation has as many line breaks as the source.' },
      doubleSpaces: { type: 'boolean', default: true, description: 'No doubled spaces the source does not have.' },
      invisibles: { type: 'boolean', default: true, description: 'No no-break, zero-width or direction characters the source lacks, unless typography calls for them.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item) {
        const source = item.source
        const translation = item.translation ?? ''
        if (!translation) return []
        const findings: FindingInput[] = []
        const spaceless = isSpaceless(item.targetLanguage, translation) || isSpaceless(item.sourceLanguage, source)

        if (options.leadingTrailing) {
          for (const where of ['Leading', 'Trailing'] as const) {
            const ws = edgeWhitespace(source, where)
            const wt = edgeWhitespace(translation, where)
            // CJK and Thai do not put spaces around words: only line breaks must match there.
            const differs = spaceless ? breaksIn(ws) !== breaksIn(wt) : normalize(ws) !== normalize(wt)
            if (differs) {
              const start = where === 'Leading' ? 0 : translation.length - wt.length
              findings.push(report(where === 'Leading' ? 'leading-whitespace' : 'trailing-whitespace', { found: describe(wt), expected: describe(ws) }, { span: { start, end: start + wt.length, in: 'translation' } }))
            }
          }
        }

        if (options.lineBreaks) {
          const bs = breaksIn(source.trim())
          const bt = breaksIn(translation.trim())
          if (bs !== bt) findings.push(report('line-breaks', { found: bt, expected: bs }))
        }

        if (options.doubleSpaces) {
          const rs = innerSpaceRuns(source)
          const rt = innerSpaceRuns(translation)
          if (rt.length > rs.length) {
            for (const m of rt.slice(rs.length)) {
              findings.push(report('doubled-space', { span: { start: m.index, end: m.index + m[0].length, in: 'translation' } }))
            }
          }
        }

        if (options.invisibles) {
          const reported = new Set<string>()
          const inSource = new Set(source.match(INVISIBLE))
          const traits = textTraits(translation, item)
          for (const m of translation.matchAll(INVISIBLE)) {
            const ch = m[0]
            if (reported.has(ch) || inSource.has(ch)) continue
            if (legitimate(translation, m.index, traits)) continue
            reported.add(ch)
            findings.push(report('invisible-character', { ch }, { span: { start: m.index, end: m.index + 1, in: 'translation' } }))
          }
        }
        return findings
      },
    }
  },
})
