// Parsing ICU MessageFormat with @formatjs/icu-messageformat-parser, and what checks ask of the
// tree: argument names, plural/select elements, whether a text is ICU at all.
import { parse, TYPE, type MessageFormatElement, type PluralElement, type SelectElement } from '@formatjs/icu-messageformat-parser'

export type IcuParse =
  | { ok: true; elements: MessageFormatElement[] }
  | { ok: false; message: string; offset: number }

/**
 * Braces nested deeper are refused before parsing. The parser recurses per level and overflows
 * the stack near 2,000 levels (fewer on a thread's smaller stack), which surfaced as "Maximum call
 * stack size exceeded"; no real message comes near 100.
 */
export const MAX_ICU_DEPTH = 100

/** The offset of the first `{` nested deeper than `max`, or -1. Quoted braces count too: a bound, not a parse. */
function tooDeepAt(text: string, max: number): number {
  let depth = 0
  for (let i = text.indexOf('{'); i !== -1 && i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x7b && ++depth > max) return i
    if (c === 0x7d && depth > 0) depth--
  }
  return -1
}

/** Parse as ICU. HTML-like tags stay literal text: tags are the tags check's business. */
export function parseIcu(text: string): IcuParse {
  const deep = tooDeepAt(text, MAX_ICU_DEPTH)
  if (deep !== -1) return { ok: false, message: `braces nested more than ${MAX_ICU_DEPTH} levels deep`, offset: deep }
  try {
    return { ok: true, elements: parse(text, { ignoreTag: true, captureLocation: true, requiresOtherClause: true }) }
  } catch (err) {
    const e = err as { message?: string; location?: { start?: { offset?: number } } }
    return { ok: false, message: e.message ?? String(err), offset: e.location?.start?.offset ?? 0 }
  }
}

/**
 * Every element at any depth, each before those of its options or children. Checks loop over this
 * rather than hand a walker a visitor made for each text: V8 holds a function's optimized code only
 * weakly once no closure of it is alive, so such a visitor is compiled again after each full GC.
 */
export function icuElements(elements: readonly MessageFormatElement[], out: MessageFormatElement[] = []): MessageFormatElement[] {
  for (const el of elements) {
    out.push(el)
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      for (const option of Object.values(el.options)) icuElements(option.value, out)
    } else if (el.type === TYPE.tag) {
      icuElements(el.children, out)
    }
  }
  return out
}

/** Names of all arguments, at any depth. */
export function icuArgumentNames(elements: readonly MessageFormatElement[]): Set<string> {
  const names = new Set<string>()
  for (const el of icuElements(elements)) {
    switch (el.type) {
      case TYPE.argument:
      case TYPE.number:
      case TYPE.date:
      case TYPE.time:
      case TYPE.plural:
      case TYPE.select:
        names.add(el.value)
        break
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
  return names
}

export function icuPluralsAndSelects(elements: readonly MessageFormatElement[]): (PluralElement | SelectElement)[] {
  const out: (PluralElement | SelectElement)[] = []
  for (const el of icuElements(elements)) if (el.type === TYPE.plural || el.type === TYPE.select) out.push(el)
  return out
}

/** True when the text parses as ICU and uses plural, select or selectordinal. */
export function isIcuSelectMessage(text: string): boolean {
  if (!text.includes('{')) return false
  const parsed = parseIcu(text)
  return parsed.ok && icuPluralsAndSelects(parsed.elements).length > 0
}

/** Does the message use ICU beyond simple `{name}` arguments (typed arguments, plural, select)? */
export function usesIcuSyntax(elements: readonly MessageFormatElement[]): boolean {
  for (const el of icuElements(elements)) if (el.type === TYPE.number || el.type === TYPE.date || el.type === TYPE.time || el.type === TYPE.plural || el.type === TYPE.select) return true
  return false
}
