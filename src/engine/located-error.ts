// Errors that point into a pipeline file (`file:line:col message` and the offending line, the way
// Vale reports config errors), and the YAML node lookup that finds where a path of keys lives.
import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from 'yaml'

export interface LocatedError { file: string; line: number; col: number; message: string; excerpt?: string }

/** `file:line:col message`, then the offending line with a caret under the column. */
export function formatLocatedError(e: LocatedError): string {
  const head = `${e.file}:${e.line}:${e.col} ${e.message}`
  if (e.excerpt === undefined) return head
  const line = e.excerpt.replace(/\t/g, ' ')
  return `${head}\n    ${line}\n    ${' '.repeat(Math.max(0, Math.min(e.col - 1, line.length)))}^`
}

export type YamlPath = ReadonlyArray<string | number>

/** One pipeline file being checked: turns offsets and key paths into located errors. */
export class SourceFile {
  private lines: string[] | undefined

  constructor(readonly file: string, readonly text: string, readonly lineCounter: LineCounter, readonly doc?: Document) {}

  errorAt(offset: number, message: string): LocatedError {
    const { line, col } = this.lineCounter.linePos(Math.max(0, Math.min(offset, this.text.length)))
    this.lines ??= this.text.split(/\r?\n/)
    return { file: this.file, line, col, message, excerpt: this.lines[line - 1] ?? '' }
  }

  /** The node at a path of keys and indexes, and the pair holding it (for pointing at the key). */
  find(path: YamlPath): { node?: Node; pair?: Pair; parent?: Node } {
    let node: unknown = this.doc?.contents
    let pair: Pair | undefined
    let parent: Node | undefined
    for (const seg of path) {
      parent = node as Node
      if (isMap(node)) {
        pair = node.items.find((p) => isPair(p) && (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg))
        node = pair?.value
      } else if (isSeq(node) && typeof seg === 'number') {
        pair = undefined
        node = node.items[seg]
      } else {
        return { parent }
      }
      if (node === undefined || node === null) return { pair, parent }
    }
    return { node: node as Node, pair, parent }
  }

  /** Offset of a path's value (or of its key when `at: 'key'`), else of its nearest ancestor. */
  offsetOf(path: YamlPath, at: 'key' | 'value' = 'value'): number {
    for (let n = path.length; n >= 0; n--) {
      const { node, pair, parent } = this.find(path.slice(0, n))
      if (at === 'key' && n === path.length && pair && (pair.key as Node | null)?.range) return (pair.key as Node).range![0]
      if (node?.range) return node.range[0]
      if (pair && (pair.key as Node | null)?.range) return (pair.key as Node).range![0]
      if (n === path.length && parent?.range && !node) continue
    }
    return 0
  }

  errorAtPath(path: YamlPath, message: string, at: 'key' | 'value' = 'value'): LocatedError {
    return this.errorAt(this.offsetOf(path, at), message)
  }

  /** Offset of character `index` inside a scalar's value (for errors inside conditions and patterns). */
  offsetInScalar(path: YamlPath, index: number): number {
    const { node } = this.find(path)
    if (!isScalar(node) || !node.range) return this.offsetOf(path)
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE'
    const singleLine = !this.text.slice(node.range[0], node.range[1]).includes('\n')
    // Escapes and folded lines shift characters; then the start of the value is the honest answer.
    return singleLine && (node.type === 'PLAIN' || quoted) ? node.range[0] + (quoted ? 1 : 0) + index : node.range[0]
  }
}
