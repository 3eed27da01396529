// A deterministic measure of how much work a piece of code does, independent of V8's speed and of
// the machine's load: while `countWork` runs, the built-in methods that scan strings and arrays
// (RegExp exec and everything built on it, indexOf, slice, split, splice, map, filter, sort,
// Intl.Segmenter, ...) are wrapped, and each call adds the number of characters or elements it
// may have scanned or copied. Plain loops over characters cost nothing here, so a check that is
// quadratic through `indexOf` in a loop, a `slice` per match, an array `splice` or `findIndex` per
// element, or a global regex run once per match over the whole text shows as work growing 4x
// when its input doubles. What it cannot see: backtracking inside one regex call (one exec is
// charged the characters from where it starts to where it stops, not the retries from every
// start position inside it); test/plugins/regex-backtracking.test.ts covers those.
/* eslint-disable @typescript-eslint/no-explicit-any */

type Fn = (this: any, ...args: any[]) => any

interface Counter { work: number; byOp: Map<string, number> }

let active: Counter | undefined
let depth = 0

const originals: Array<[object, string | symbol, Fn]> = []

function charge(op: string, amount: number): void {
  if (!active || depth > 0) return
  active.work += amount
  active.byOp.set(op, (active.byOp.get(op) ?? 0) + amount)
}

function wrap(target: object, name: string | symbol, cost: (self: any, args: any[], result: any, lastIndex: number) => number, label = String(name)): void {
  const original = (target as any)[name] as Fn
  originals.push([target, name, original])
  ;(target as any)[name] = function (this: any, ...args: any[]) {
    if (!active || depth > 0) return Reflect.apply(original, this, args)
    // Work the wrapped method does through other wrapped methods (replace calls exec) is charged
    // to those; the cost function itself must not be charged.
    const lastIndex = this instanceof RegExp ? this.lastIndex : 0
    const result = Reflect.apply(original, this, args)
    let amount: number
    depth++
    try {
      amount = 1 + Math.max(0, cost(this, args, result, lastIndex))
    } finally {
      depth--
    }
    charge(label, amount)
    return result
  }
}

const len = (s: unknown): number => (typeof s === 'string' || Array.isArray(s) ? s.length : 0)
const str = (self: unknown): string => String(self)

function install(): void {
  const S = String.prototype
  const A = Array.prototype
  wrap(RegExp.prototype, 'exec', (self: RegExp, args, result, before) => {
    const text = str(args[0])
    const from = self.global || self.sticky ? before : 0
    if (result) return result.index + result[0].length - from
    return self.sticky ? 1 : text.length - from
  })
  const scanFrom = (found: number, needle: string, self: string, from = 0) => (found === -1 ? self.length - from : found + needle.length - from)
  wrap(S, 'indexOf', (self, [needle, from], r) => scanFrom(r, str(needle), str(self), Math.max(0, Number(from) || 0)))
  wrap(S, 'includes', (self, [needle, from]) => str(self).length - Math.max(0, Number(from) || 0) + len(needle))
  wrap(S, 'lastIndexOf', (self, [, from], r) => (from === undefined ? str(self).length : Number(from)) - Math.max(0, r))
  wrap(S, 'startsWith', (_self, [needle]) => len(needle))
  wrap(S, 'endsWith', (_self, [needle]) => len(needle))
  for (const m of ['slice', 'substring', 'substr', 'repeat', 'padStart', 'padEnd', 'concat']) wrap(S, m, (_self, _args, r) => len(r))
  for (const m of ['split', 'replace', 'replaceAll', 'trim', 'trimStart', 'trimEnd', 'toLowerCase', 'toUpperCase', 'toLocaleLowerCase', 'toLocaleUpperCase', 'normalize', 'localeCompare', 'match', 'matchAll', 'search']) {
    wrap(S, m, (self) => str(self).length)
  }
  for (const m of ['indexOf', 'lastIndexOf', 'includes', 'find', 'findIndex', 'findLast', 'findLastIndex', 'some', 'every', 'filter', 'map', 'flatMap', 'forEach', 'reduce', 'join', 'reverse', 'fill', 'flat', 'shift', 'unshift', 'concat']) {
    wrap(A, m, (self) => len(self), `Array#${m}`)
  }
  wrap(A, 'slice', (_self, _args, r) => len(r), 'Array#slice')
  wrap(A, 'splice', (self, [start]) => len(self) - Math.max(0, Number(start) || 0), 'Array#splice')
  wrap(A, 'sort', (self) => len(self) * Math.ceil(Math.log2(len(self) + 1)), 'Array#sort')
  wrap(Intl.Segmenter.prototype, 'segment', (_self, [text]) => len(text), 'Segmenter#segment')
  // V8 (Node 20) copies the whole input for every segment it yields: charged as it costs.
  const segmentIterator = Object.getPrototypeOf(new Intl.Segmenter('en').segment('')[Symbol.iterator]()) as object
  wrap(segmentIterator, 'next', (_self, _args, r) => len(r?.value?.input), 'Segments#next')
  for (const m of ['charCodeAt', 'codePointAt', 'charAt', 'at']) wrap(S, m, () => 0)
}

function uninstall(): void {
  for (const [target, name, original] of originals.splice(0).reverse()) (target as any)[name] = original
}

export interface Work {
  /** Characters and elements scanned or copied by built-in methods. */
  work: number
  /** The same, by method: where the work went. */
  byOp: Map<string, number>
}

/** Run `fn` and count its work. Synchronous code only (a check's `check()`). */
export function countWork(fn: () => unknown): Work {
  if (active) throw new Error('countWork does not nest')
  const counter: Counter = { work: 0, byOp: new Map() }
  install()
  active = counter
  try {
    fn()
  } finally {
    active = undefined
    uninstall()
  }
  return counter
}
