// ICU4J argument types that @formatjs/icu-messageformat-parser refuses (INVALID_ARGUMENT_TYPE):
// `{n, spellout}`, `{n, ordinal}`, `{n, duration}` (each with an optional rule set such as
// `%spellout-ordinal`) and ChoiceFormat `{n, choice, 0#none|1#one|1<{n} many}`. The parser has no
// hook for other types, so the text is rewritten, at the same length, into one it parses: such
// an argument becomes a plain `{n      }`, and a choice keeps its sub-messages in place (their
// nested arguments count) with its own syntax blanked. The shape of each rewritten argument is
// kept by the offset of its `{`, which the parsed element's location still gives.

const HEAD = /\{(\s*[^\s,{}'#|]+)\s*,\s*(spellout|ordinal|duration|choice)\s*([,}])/y
// A choice limit: `0`, `-∞`, `1.5`, `1e3` (ICU4J's ChoiceFormat syntax), then `#`, `<` or `≤`.
// Bounded, and the spaces around it skipped by hand: no part can backtrack over another.
const LIMIT = /[-+]?(?:∞|\d{1,30}(?:\.\d{1,30})?(?:[eE][-+]?\d{1,3})?)/y
const RELATIONS = '#<≤'

export interface Icu4jRewrite {
  /** The text for the parser: same length, every ICU4J-only argument written as ICU it knows. */
  text: string
  /** `{n, spellout}`, `{n, ordinal, %digits-ordinal}`, `{n, choice, …}`, by the offset of the argument's `{`. */
  shapes: Map<number, string>
}

interface Frame { choice?: { at: number; name: string; expectLimit: boolean } }

/**
 * The text rewritten for @formatjs, or unchanged (with no shapes) when it has no ICU4J-only
 * argument or one of them is malformed: the parser then reports the text as it is. One pass with
 * an explicit stack, so a deeply nested text cannot overflow the call stack here.
 */
export function rewriteIcu4jArguments(text: string): Icu4jRewrite {
  const unchanged = { text, shapes: new Map<number, string>() }
  if (!/\b(?:spellout|ordinal|duration|choice)\b/.test(text)) return unchanged
  const out = text.split('') // code units, as the parser's offsets are
  const blank = (from: number, to: number) => { for (let k = from; k < to; k++) out[k] = ' ' }
  const shapes = new Map<number, string>()
  const stack: Frame[] = []
  let i = 0
  while (i < text.length) {
    const top = stack[stack.length - 1]
    const choice = top?.choice
    if (choice?.expectLimit) {
      LIMIT.lastIndex = skipSpaces(text, i)
      if (!LIMIT.exec(text)) return unchanged
      const relation = skipSpaces(text, LIMIT.lastIndex)
      if (!RELATIONS.includes(text[relation] ?? '\n')) return unchanged
      blank(i, relation + 1)
      choice.expectLimit = false
      i = relation + 1
      continue
    }
    const c = text[i]!
    if (c === "'") {
      i = skipQuote(text, i, choice !== undefined)
      continue
    }
    if (c === '{') {
      HEAD.lastIndex = i
      const m = HEAD.exec(text)
      if (!m) {
        stack.push({})
        i++
        continue
      }
      const [, rawName, type, after] = m
      const name = rawName!.trim()
      const nameEnd = i + 1 + rawName!.length
      if (type === 'choice') {
        if (after !== ',') return unchanged
        out[nameEnd] = '}'
        blank(nameEnd + 1, HEAD.lastIndex)
        stack.push({ choice: { at: i, name, expectLimit: true } })
        i = HEAD.lastIndex
        continue
      }
      const end = after === '}' ? HEAD.lastIndex - 1 : styleEnd(text, HEAD.lastIndex)
      if (end === -1) return unchanged
      const style = after === '}' ? '' : text.slice(HEAD.lastIndex, end).trim()
      shapes.set(i, `{${name}, ${type}${style ? `, ${style}` : ''}}`)
      blank(nameEnd, end)
      i = end + 1
      continue
    }
    if (c === '|' && choice) {
      out[i] = ' '
      choice.expectLimit = true
    } else if (c === '}') {
      if (choice) {
        out[i] = ' '
        shapes.set(choice.at, `{${choice.name}, choice, …}`)
      }
      stack.pop()
    }
    i++
  }
  if (stack.some((f) => f.choice)) return unchanged
  return { text: out.join(''), shapes }
}

/**
 * After an apostrophe: `''` is one apostrophe; before `{`, `}` (or `|` in a choice) it quotes
 * up to the next lone apostrophe (ICU's apostrophe mode); otherwise it is a plain apostrophe.
 */
function skipQuote(text: string, at: number, inChoice: boolean): number {
  const next = text[at + 1]
  if (next === "'") return at + 2
  if (next !== '{' && next !== '}' && !(inChoice && next === '|')) return at + 1
  for (let k = at + 1; k < text.length; k++) {
    if (text[k] !== "'") continue
    if (text[k + 1] === "'") k++
    else return k + 1
  }
  return text.length
}

/** The `}` that ends an argument's style (balanced braces and quotes inside), or -1. */
function styleEnd(text: string, from: number): number {
  let depth = 0
  for (let k = from; k < text.length; k++) {
    const c = text[k]
    if (c === "'") k = skipQuote(text, k, false) - 1
    else if (c === '{') depth++
    else if (c === '}' && depth-- === 0) return k
  }
  return -1
}

function skipSpaces(text: string, from: number): number {
  let k = from
  while (k < text.length && /\s/.test(text[k]!)) k++
  return k
}
