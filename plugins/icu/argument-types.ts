// What each ICU argument is formatted as: `{value}`, `{value, number, ::currency/USD}`,
// `{d, date, short}`, `{n, plural, …}`, `{g, select, …}`. A translation that turns a currency into
// a bare value, or a select into a plain argument, formats differently or not at all.
import { TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser'
import { icuElements } from '../_shared/icu-message.js'

type Style = string | { tokens?: { stem: string; options: string[] }[]; pattern?: string } | null | undefined

function styleText(style: Style): string {
  if (!style) return ''
  if (typeof style === 'string') return `, ${style}`
  if (style.tokens) return `, ::${style.tokens.map((t) => [t.stem, ...t.options].join('/')).join(' ')}`
  return style.pattern ? `, ::${style.pattern}` : ''
}

/**
 * Each argument's formats, as written in ICU without the options: `{value, number, ::currency/USD}`.
 * `icu4j` holds the shapes of the ICU4J-only arguments the parser saw as plain ones (icu4j-arguments.ts).
 */
export function icuArgumentTypes(elements: readonly MessageFormatElement[], icu4j: ReadonlyMap<number, string> = new Map()): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const el of icuElements(elements)) {
    switch (el.type) {
      case TYPE.argument: addShape(out, el.value, icu4j.get(el.location?.start.offset ?? -1) ?? `{${el.value}}`); break
      case TYPE.number: addShape(out, el.value, `{${el.value}, number${styleText(el.style as Style)}}`); break
      case TYPE.date: addShape(out, el.value, `{${el.value}, date${styleText(el.style as Style)}}`); break
      case TYPE.time: addShape(out, el.value, `{${el.value}, time${styleText(el.style as Style)}}`); break
      // The offset is subtracted from the value before `#` shows it and a category is chosen: a
      // translation that drops or changes it shows another number ("and 3 others" for 2).
      case TYPE.plural: addShape(out, el.value, `{${el.value}, ${el.pluralType === 'ordinal' ? 'selectordinal' : 'plural'}, ${el.offset ? `offset:${el.offset} ` : ''}…}`); break
      case TYPE.select: addShape(out, el.value, `{${el.value}, select, …}`); break
      case TYPE.literal:
      case TYPE.pound:
      case TYPE.tag:
        break
      default: {
        const never: never = el
        void never
      }
    }
  }
  return out
}

function addShape(out: Map<string, Set<string>>, name: string, shape: string): void {
  const set = out.get(name)
  if (set) set.add(shape)
  else out.set(name, new Set([shape]))
}

/** A plain count: `{n}`, `{n, number}`, `{n, number, integer}`. A language may pluralize it (without an offset). */
const COUNT = /^\{[^,{}]+(?:, number(?:, (?:integer|::integer))?)?\}$/
const PLURAL = /^\{[^,{}]+, plural, …\}$/

const DATE_OR_TIME = /^\{[^,{}]+, (date|time)\b/
// ICU4J's rule-based formats: a rule set (`%spellout-ordinal`) is named per language (German has
// `%spellout-ordinal-neuter`), so choosing another is the translator's call, as a date style is.
const RULE_BASED = /^\{[^,{}]+, (spellout|ordinal|duration)\b/

/** Only the style changed: every shape of both sides is of `kind`, of the same type when `sameType`. */
function styleOnly(missing: string[], extra: string[], kind: RegExp, sameType = false): boolean {
  const types = (xs: string[]) => new Set(xs.map((x) => kind.exec(x)?.[1]))
  const a = types(missing)
  const b = types(extra)
  if (a.has(undefined) || b.has(undefined)) return false
  return !sameType || (a.size === b.size && [...a].every((t) => b.has(t)))
}

export interface TypeChange { name: string; source: string[]; translation: string[]; severity: 'error' | 'warning' }

/**
 * Arguments formatted differently in the translation. Allowed: a translation that pluralizes a
 * plain count (`{count, number}` → `{count, plural, one {…} other {…}}`), and one in a language with
 * a single plural category (Japanese) that writes a source plural as a plain count. Only a date or
 * time style changed (`short` → `medium`), or only an ICU4J rule set (`%spellout-ordinal`) of a spellout,
 * ordinal or duration, is a warning: the format is the translator's call there.
 */
export function argumentTypeChanges(source: Map<string, Set<string>>, target: Map<string, Set<string>>, singleCategory: boolean): TypeChange[] {
  const out: TypeChange[] = []
  for (const [name, s] of source) {
    const t = target.get(name)
    if (!t) continue
    const missing = [...s].filter((x) => !t.has(x))
    const extra = [...t].filter((x) => !s.has(x))
    if (!missing.length && !extra.length) continue
    const pluralized = extra.every((x) => PLURAL.test(x)) && missing.every((x) => COUNT.test(x)) && [...t].some((x) => PLURAL.test(x))
    const unpluralized = singleCategory && missing.every((x) => PLURAL.test(x)) && extra.every((x) => COUNT.test(x))
    if (pluralized || unpluralized) continue
    const severity = missing.length && extra.length && (styleOnly(missing, extra, DATE_OR_TIME) || styleOnly(missing, extra, RULE_BASED, true)) ? 'warning' : 'error'
    out.push({ name, source: missing, translation: extra, severity })
  }
  return out
}
