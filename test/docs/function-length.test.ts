// "No function in src/ or plugins/ is longer than 150 lines" (issue 19), checked with the
// TypeScript compiler's own parser: every function declaration, function expression, arrow
// function, method, constructor and accessor is measured from its first line to its last. A
// function that holds a long nested function is as long as its whole span: splitting one has to
// really move code out, not wrap it in an inner closure.
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MAX_FUNCTION_LINES = 150

interface LongFunction {
  where: string
  name: string
  lines: number
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .sort()
}

/** The name a reader would search for: the declaration's own, or what the function is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (node.name) return node.name.getText(sf)
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) return parent.name.getText(sf)
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(sf).slice(0, 40)})`
  return '(anonymous)'
}

/** Every function-like node of one file with its length in lines, first line to last inclusive. */
function measureFunctions(file: string, text: string): LongFunction[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const out: LongFunction[] = []
  const visit = (node: ts.Node): void => {
    if (
      (ts.isFunctionDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isGetAccessorDeclaration(node) ||
        ts.isSetAccessorDeclaration(node)) &&
      node.body
    ) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line
      out.push({ where: `${file}:${start + 1}`, name: nameOf(node, sf), lines: end - start + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}

describe('function length', () => {
  it('measures a function by its whole span, nested functions included', () => {
    const inner = Array.from({ length: 5 }, (_, i) => `    const x${i} = ${i}`).join('\n')
    const text = `function outer() {\n  const inner = () => {\n${inner}\n  }\n  return inner\n}\nclass C {\n  m() {\n    return 1\n  }\n}\n`
    expect(measureFunctions('x.ts', text)).toEqual([
      { where: 'x.ts:1', name: 'outer', lines: 10 },
      { where: 'x.ts:2', name: 'inner', lines: 7 },
      { where: 'x.ts:12', name: 'm', lines: 3 },
    ])
  })

  it(`finds no function in src/ or plugins/ longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const files = [...sourceFiles('src'), ...sourceFiles('plugins')]
    expect(files.length).toBeGreaterThan(50)
    const long = files
      .flatMap((f) => measureFunctions(f, readFileSync(path.join(ROOT, f), 'utf8')))
      .filter((f) => f.lines > MAX_FUNCTION_LINES)
      .map((f) => `${f.where} ${f.name}: ${f.lines} lines`)
    expect(long, `functions over ${MAX_FUNCTION_LINES} lines; split them into named functions`).toEqual([])
  })
})
