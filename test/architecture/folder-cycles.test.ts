// The top-level folders of src/ depend on each other in one direction only: a folder that another
// depends on never depends back on it, through any chain. Shared types live in src/protocol, which
// depends on no other folder but util. The graph is built from every import and re-export specifier
// (type-only and dynamic ones included) of every .ts file, read with the TypeScript compiler.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')

/** The folder a file of src/ belongs to; files directly in src/ form their own node. */
function folderOf(file: string): string {
  const rel = path.relative(SRC, file).split(path.sep)
  return rel.length > 1 ? rel[0]! : '(src/*.ts)'
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : []
  })
}

/** folder -> folder -> one import that makes the edge (`file: specifier`). */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>()
  for (const file of tsFiles(SRC)) {
    const from = folderOf(file)
    if (!graph.has(from)) graph.set(from, new Map())
    for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!spec.startsWith('.')) continue
      const target = path.resolve(path.dirname(file), spec)
      if (path.relative(SRC, target).startsWith('..')) continue
      const to = folderOf(target)
      if (to !== from && !graph.get(from)!.has(to)) graph.get(from)!.set(to, `${path.relative(SRC, file)}: ${spec}`)
    }
  }
  return graph
}

/** Every cycle's folders (one per strongly connected component of more than one folder), by Tarjan. */
function findCycles(graph: Map<string, Map<string, string>>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (v: string) => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) components.push(component)
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return components
}

/** One cycle through a component, each step with the import that makes it: a -> b (file: spec) -> ... -> a. */
function describeCycle(graph: Map<string, Map<string, string>>, component: string[]): string {
  const inside = new Set(component)
  const start = [...component].sort()[0]!
  // Shortest way back to the start, breadth first, within the component.
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length) {
    const v = queue.shift()!
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!inside.has(w) || previous.has(w)) continue
      previous.set(w, v)
      if (w === start) break
      queue.push(w)
    }
    if (previous.has(start)) break
  }
  const path: string[] = [start]
  for (let v = previous.get(start)!; v !== start; v = previous.get(v)!) path.unshift(v)
  path.unshift(start)
  return path.slice(1).map((to, i) => `${path[i]} -> ${to} (${graph.get(path[i]!)!.get(to)})`).join('\n  ')
}

describe('folders of src/', () => {
  it('import each other without cycles', () => {
    const graph = folderGraph()
    expect(graph.size).toBeGreaterThan(10)
    const cycles = findCycles(graph).map((c) => describeCycle(graph, c))
    expect(cycles, `folder cycles:\n  ${cycles.join('\n\n  ')}`).toEqual([])
  })

  it('protocol, the shared types, depends on no other folder but util', () => {
    expect([...(folderGraph().get('protocol')?.keys() ?? [])].filter((f) => f !== 'util')).toEqual([])
  })

  it('finds and prints a cycle when there is one', () => {
    const graph = new Map([
      ['a', new Map([['b', 'a/x.ts: ../b/y.js']])],
      ['b', new Map([['c', 'b/y.ts: ../c/z.js']])],
      ['c', new Map([['a', 'c/z.ts: ../a/x.js'], ['d', 'c/z.ts: ../d/w.js']])],
      ['d', new Map<string, string>()],
    ])
    const cycles = findCycles(graph)
    expect(cycles.map((c) => [...c].sort())).toEqual([['a', 'b', 'c']])
    expect(describeCycle(graph, cycles[0]!)).toBe('a -> b (a/x.ts: ../b/y.js)\n  b -> c (b/y.ts: ../c/z.js)\n  c -> a (c/z.ts: ../a/x.js)')
  })
})
