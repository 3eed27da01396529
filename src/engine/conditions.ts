// The condition language of `if:` on checks and routes. Parsed and type-checked once, at load, into
// closures: no eval, no new Function, nothing a pipeline author writes can reach JavaScript.
//
//   expr    := or
//   or      := and (("or" | "||") and)*
//   and     := unary (("and" | "&&") unary)*
//   unary   := ("not" | "!") unary | compare
//   compare := primary (("==" | "!=" | ">" | ">=" | "<" | "<=" | "contains" | "matches") primary)?
//   primary := number | "string" | 'string' | true | false | name | "(" expr ")"
//            | "no" ("errors" | "warnings" | "infos" | "findings") ["so" "far"]
//
// Names: errors, warnings, infos, findings (counts so far; by check: findings.<check-id>,
// errors.<check-id>, ...), file.type, file.path, key, context, maxLength, labels, plural,
// source, translation, source.language, target.language, settings.<name>.
import type { Item } from './types.js'

export type ValueType = 'number' | 'string' | 'boolean' | 'list' | 'any'

/** What a condition is evaluated against: one string and its findings so far. */
export interface EvalState {
  item: Item
  /** Counts of findings by severity: [errors, warnings, infos]. */
  sev: Int32Array
  /** Counts by check: index * 3 + severity index (see ConditionScope.checks). */
  byCheck: Int32Array
}

export interface ConditionScope {
  /** Check ids a condition may name (findings.<id>), each with its index in EvalState.byCheck. */
  checks: ReadonlyMap<string, number>
  /**
   * Ids of checks switched off (`enabled: false`): a condition may still name them, and their
   * counts are 0, so that switching a check off does not break the routes that count it.
   */
  disabled?: ReadonlySet<string>
  /** Settings a condition may name, with their types. */
  settings: ReadonlyMap<string, ValueType>
}

export type Condition = ((state: EvalState) => boolean) & {
  /**
   * The condition in three-valued logic, for reasoning about a route at load (compile-pipeline's
   * issues rule): the string's fields and settings are unknown, and with `othersUnknown` every
   * count but the string's total errors and findings too. True or false when the known counts
   * decide it, undefined when it depends on what is unknown.
   */
  decided(state: EvalState, othersUnknown: boolean): boolean | undefined
}

export class ConditionError extends Error {
  /** Offset in the condition text where the problem is. */
  constructor(message: string, readonly offset: number) {
    super(message)
    this.name = 'ConditionError'
  }
}

type TokenKind = 'num' | 'str' | 'name' | 'op' | '(' | ')' | 'end'
interface Token { kind: TokenKind; text: string; value?: string | number; at: number }

const WORD_OPS = new Set(['and', 'or', 'not', 'contains', 'matches'])

function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i]!
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') { i++; continue }
    const at = i
    if (c === '(' || c === ')') { tokens.push({ kind: c, text: c, at }); i++; continue }
    const two = src.slice(i, i + 2)
    if (['==', '!=', '>=', '<=', '&&', '||'].includes(two)) { tokens.push({ kind: 'op', text: two, at }); i += 2; continue }
    if (c === '>' || c === '<' || c === '!') { tokens.push({ kind: 'op', text: c, at }); i++; continue }
    if (c === '=') throw new ConditionError('"=" is not an operator; compare with "=="', at)
    if (c === '"' || c === "'") {
      let j = i + 1
      let text = ''
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && j + 1 < src.length) { text += src[j + 1]; j += 2; continue }
        text += src[j]; j++
      }
      if (j >= src.length) throw new ConditionError('unterminated string', at)
      tokens.push({ kind: 'str', text: src.slice(i, j + 1), value: text, at })
      i = j + 1
      continue
    }
    const num = /^-?\d+(\.\d+)?/.exec(src.slice(i))
    if (num) { tokens.push({ kind: 'num', text: num[0], value: Number(num[0]), at }); i += num[0].length; continue }
    // After a dot, a digit may start the part: check ids may (`findings.1st-pass`).
    const name = /^[A-Za-z_][\w-]*(\.[\w-]+)*/.exec(src.slice(i))
    if (name) {
      const word = name[0]
      tokens.push({ kind: WORD_OPS.has(word) ? 'op' : 'name', text: word, at })
      i += word.length
      continue
    }
    throw new ConditionError(`unexpected character ${JSON.stringify(c)}`, at)
  }
  tokens.push({ kind: 'end', text: '', at: src.length })
  return tokens
}

/** A value that depends on what the three-valued evaluation leaves unknown. */
const UNKNOWN = Symbol('unknown')
type Known = (s: EvalState, othersUnknown: boolean) => unknown

/** `k`: the node in three-valued logic (see Condition.decided); absent, the node is always known. */
interface Node { type: ValueType; at: number; eval: (s: EvalState) => unknown; literal?: unknown; k?: Known }

const known = (n: Node): Known => n.k ?? ((s) => n.eval(s))
/** Kleene's and/or/not over true, false and UNKNOWN. */
const kAnd = (a: unknown, b: unknown): unknown => (a !== UNKNOWN && !truthy(a)) || (b !== UNKNOWN && !truthy(b)) ? false : a === UNKNOWN || b === UNKNOWN ? UNKNOWN : true
const kOr = (a: unknown, b: unknown): unknown => (a !== UNKNOWN && truthy(a)) || (b !== UNKNOWN && truthy(b)) ? true : a === UNKNOWN || b === UNKNOWN ? UNKNOWN : false

const SEVERITY_INDEX = { errors: 0, warnings: 1, infos: 2 } as const
type CountName = keyof typeof SEVERITY_INDEX | 'findings'

function countNode(name: CountName, checkIndex: number | undefined, at: number): Node {
  const node = plainCountNode(name, checkIndex, at)
  // The string's total errors and findings stay known in the three-valued evaluation; the rest
  // (warnings, infos, a check's own counts) are unknown when it says so.
  if (checkIndex === undefined && (name === 'errors' || name === 'findings')) return node
  const ev = node.eval
  return { ...node, k: (s, othersUnknown) => (othersUnknown ? UNKNOWN : ev(s)) }
}

function plainCountNode(name: CountName, checkIndex: number | undefined, at: number): Node {
  if (checkIndex === undefined) {
    if (name === 'findings') return { type: 'number', at, eval: (s) => s.sev[0]! + s.sev[1]! + s.sev[2]! }
    const i = SEVERITY_INDEX[name]
    return { type: 'number', at, eval: (s) => s.sev[i]! }
  }
  const base = checkIndex * 3
  if (name === 'findings') return { type: 'number', at, eval: (s) => s.byCheck[base]! + s.byCheck[base + 1]! + s.byCheck[base + 2]! }
  const i = base + SEVERITY_INDEX[name]
  return { type: 'number', at, eval: (s) => s.byCheck[i]! }
}

const FIELDS: Record<string, { type: ValueType; get: (item: Item) => unknown }> = {
  'file.type': { type: 'string', get: (i) => i.fileType },
  'file.path': { type: 'string', get: (i) => i.filePath },
  key: { type: 'string', get: (i) => i.key },
  context: { type: 'string', get: (i) => i.context },
  maxLength: { type: 'number', get: (i) => i.maxLength },
  labels: { type: 'list', get: (i) => i.labelIds },
  plural: { type: 'boolean', get: (i) => i.isPlural },
  source: { type: 'string', get: (i) => i.source },
  translation: { type: 'string', get: (i) => i.translation ?? '' },
  'source.language': { type: 'string', get: (i) => i.sourceLanguage.id },
  'target.language': { type: 'string', get: (i) => i.targetLanguage.id },
}

/** The names a condition may use, for error messages and docs. */
export const CONDITION_NAMES = ['errors', 'warnings', 'infos', 'findings', 'findings.<check-id>', ...Object.keys(FIELDS), 'settings.<name>']

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0
  return !!v
}

class Parser {
  private pos = 0
  constructor(private readonly tokens: Token[], private readonly scope: ConditionScope) {}

  private peek(): Token { return this.tokens[this.pos]! }
  private next(): Token { return this.tokens[this.pos++]! }
  private isOp(...ops: string[]): boolean { const t = this.peek(); return t.kind === 'op' && ops.includes(t.text) }

  parse(): Node {
    const node = this.or()
    const t = this.peek()
    if (t.kind !== 'end') throw new ConditionError(`unexpected ${JSON.stringify(t.text)}; expected "and", "or" or the end`, t.at)
    return node
  }

  private or(): Node {
    let left = this.and()
    while (this.isOp('or', '||')) {
      this.next()
      const l = left, r = this.and()
      const kl = known(l), kr = known(r)
      left = { type: 'boolean', at: l.at, eval: (s) => truthy(l.eval(s)) || truthy(r.eval(s)), k: (s, o) => kOr(kl(s, o), kr(s, o)) }
    }
    return left
  }

  private and(): Node {
    let left = this.unary()
    while (this.isOp('and', '&&')) {
      this.next()
      const l = left, r = this.unary()
      const kl = known(l), kr = known(r)
      left = { type: 'boolean', at: l.at, eval: (s) => truthy(l.eval(s)) && truthy(r.eval(s)), k: (s, o) => kAnd(kl(s, o), kr(s, o)) }
    }
    return left
  }

  private unary(): Node {
    if (this.isOp('not', '!')) {
      const t = this.next()
      const inner = this.unary()
      const ki = known(inner)
      return { type: 'boolean', at: t.at, eval: (s) => !truthy(inner.eval(s)), k: (s, o) => { const v = ki(s, o); return v === UNKNOWN ? UNKNOWN : !truthy(v) } }
    }
    return this.compare()
  }

  private compare(): Node {
    const left = this.primary()
    if (!this.isOp('==', '!=', '>', '>=', '<', '<=', 'contains', 'matches')) return left
    const op = this.next()
    const right = this.primary()
    const node = this.comparison(left, op, right)
    // Known when both sides are: then compared on their three-valued values, never by re-running
    // the sides' plain evaluation (a side known by Kleene logic, `(x or errors > 0)`, still reads
    // the fields of its unknown part there).
    const kl = known(left), kr = known(right)
    const sides: [unknown, unknown] = [undefined, undefined]
    const onKnown = this.comparison({ ...left, eval: () => sides[0] }, op, { ...right, eval: () => sides[1] })
    return {
      ...node,
      k: (s, o) => {
        const a = kl(s, o), b = kr(s, o)
        if (a === UNKNOWN || b === UNKNOWN) return UNKNOWN
        sides[0] = a; sides[1] = b
        return onKnown.eval(s)
      },
    }
  }

  private comparison(left: Node, op: Token, right: Node): Node {
    const l = left.eval, r = right.eval
    const mismatch = (want: string) => new ConditionError(`"${op.text}" needs ${want}`, op.at)
    switch (op.text) {
      case '==': case '!=': {
        if (left.type !== 'any' && right.type !== 'any' && left.type !== right.type) {
          throw new ConditionError(`cannot compare a ${left.type} with a ${right.type}`, op.at)
        }
        const eq = (s: EvalState) => {
          const a = l(s), b = r(s)
          return Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((x, i) => x === b[i]) : a === b
        }
        return op.text === '==' ? { type: 'boolean', at: left.at, eval: eq } : { type: 'boolean', at: left.at, eval: (s) => !eq(s) }
      }
      case '>': case '>=': case '<': case '<=': {
        if ((left.type !== 'number' && left.type !== 'any') || (right.type !== 'number' && right.type !== 'any')) throw mismatch('numbers on both sides')
        const cmp = op.text
        return {
          type: 'boolean', at: left.at,
          eval: (s) => {
            const a = l(s) as number, b = r(s) as number
            return cmp === '>' ? a > b : cmp === '>=' ? a >= b : cmp === '<' ? a < b : a <= b
          },
        }
      }
      case 'contains': {
        if (left.type === 'list') {
          if (right.type !== 'number' && right.type !== 'string' && right.type !== 'any') throw mismatch('a number or a string on the right of a list')
          // A list setting the step has not set (no default) has no value: it contains nothing.
          return { type: 'boolean', at: left.at, eval: (s) => { const a = l(s); return Array.isArray(a) && a.includes(r(s)) } }
        }
        if (left.type === 'string' && (right.type === 'string' || right.type === 'any')) {
          // A text setting without a value is empty, not "undefined".
          return { type: 'boolean', at: left.at, eval: (s) => String(l(s) ?? '').includes(String(r(s))) }
        }
        if (left.type === 'any') return { type: 'boolean', at: left.at, eval: (s) => { const a = l(s); return Array.isArray(a) ? a.includes(r(s)) : String(a ?? '').includes(String(r(s))) } }
        throw mismatch('a list or a string on the left')
      }
      case 'matches': {
        if (left.type !== 'string' && left.type !== 'any') throw mismatch('a string on the left')
        if (typeof right.literal !== 'string') throw mismatch('a quoted regular expression on the right')
        let re: RegExp
        try { re = new RegExp(right.literal, 'u') } catch (e) {
          throw new ConditionError(`invalid regular expression: ${(e as Error).message}`, right.at)
        }
        return { type: 'boolean', at: left.at, eval: (s) => re.test(String(l(s) ?? '')) }
      }
      default:
        throw new ConditionError(`unknown operator ${op.text}`, op.at)
    }
  }

  private primary(): Node {
    const t = this.next()
    switch (t.kind) {
      case 'num': { const v = t.value; return { type: 'number', at: t.at, literal: v, eval: () => v } }
      case 'str': { const v = t.value; return { type: 'string', at: t.at, literal: v, eval: () => v } }
      case '(': {
        const inner = this.or()
        const close = this.next()
        if (close.kind !== ')') throw new ConditionError('missing ")"', close.at)
        return inner
      }
      case 'name': return this.name(t)
      case ')': case 'op': case 'end':
        throw new ConditionError(t.kind === 'end' ? 'condition ends too early' : `unexpected ${JSON.stringify(t.text)}`, t.at)
      default: {
        const never: never = t.kind
        throw new ConditionError(`unexpected token ${String(never)}`, t.at)
      }
    }
  }

  private name(t: Token): Node {
    const name = t.text
    if (name === 'true' || name === 'false') { const v = name === 'true'; return { type: 'boolean', at: t.at, literal: v, eval: () => v } }
    if (name === 'no') {
      const what = this.next()
      if (what.kind !== 'name' || !['errors', 'warnings', 'infos', 'findings'].includes(what.text)) {
        throw new ConditionError('"no" must be followed by errors, warnings, infos or findings', what.at)
      }
      if (this.peek().kind === 'name' && this.peek().text === 'so') {
        this.next()
        const far = this.next()
        if (far.kind !== 'name' || far.text !== 'far') throw new ConditionError('expected "so far"', far.at)
      }
      const count = countNode(what.text as CountName, undefined, what.at)
      const kc = known(count)
      return { type: 'boolean', at: t.at, eval: (s) => count.eval(s) === 0, k: (s, o) => { const v = kc(s, o); return v === UNKNOWN ? UNKNOWN : v === 0 } }
    }
    const dot = name.indexOf('.')
    const head = dot < 0 ? name : name.slice(0, dot)
    const rest = dot < 0 ? '' : name.slice(dot + 1)
    if (head === 'errors' || head === 'warnings' || head === 'infos' || head === 'findings') {
      if (!rest) return countNode(head, undefined, t.at)
      const index = this.scope.checks.get(rest)
      if (index === undefined && this.scope.disabled?.has(rest)) return { type: 'number', at: t.at, eval: () => 0 }
      if (index === undefined) {
        throw new ConditionError(`no check with id "${rest}" in this pipeline${this.scope.checks.size ? ` (ids: ${[...this.scope.checks.keys()].join(', ')})` : ''}`, t.at + head.length + 1)
      }
      return countNode(head, index, t.at)
    }
    if (head === 'settings') {
      const type = this.scope.settings.get(rest)
      if (!rest || type === undefined) throw new ConditionError(`unknown setting "${rest}"; declare it under settings.properties`, t.at)
      // A setting the step lacks is undefined, never a member of Object.prototype (toString...).
      return { type, at: t.at, eval: (s) => (Object.hasOwn(s.item.settings, rest) ? s.item.settings[rest] : undefined), k: () => UNKNOWN }
    }
    // Own names only: toString, constructor, __proto__... are not fields.
    const field = Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined
    if (!field) throw new ConditionError(`unknown name "${name}"; known: ${CONDITION_NAMES.join(', ')}`, t.at)
    const get = field.get
    return { type: field.type, at: t.at, eval: (s) => get(s.item), k: () => UNKNOWN }
  }
}

/** Parse and type-check a condition; throws ConditionError with the offset of the problem. */
export function compileCondition(text: string, scope: ConditionScope): Condition {
  if (!text.trim()) throw new ConditionError('empty condition', 0)
  const node = new Parser(tokenize(text), scope).parse()
  const ev = node.eval
  const k = known(node)
  const condition = (s: EvalState) => truthy(ev(s))
  return Object.assign(condition, { decided: (s: EvalState, othersUnknown: boolean) => { const v = k(s, othersUnknown); return v === UNKNOWN ? undefined : truthy(v) } })
}
