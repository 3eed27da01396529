// The complete examples of docs/*.md are real files, tested elsewhere; these tests keep the docs'
// copies identical to them, and the documented `try --pretty` output identical to a real run.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseDocument } from 'yaml'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { runTry } from '../../src/cli/try.js'
import { runValidate } from '../../src/cli/validate.js'
import { FIXTURE_PLUGINS } from '../engine/helpers.js'
import { captureIo } from '../cli/io.js'

const BLOCK = /<!-- (file|try-pretty): ([^>]+?) -->\n```\w*\n([\s\S]*?)```/g

function blocks(doc: string) {
  const text = readFileSync(path.join(PACKAGE_ROOT, 'docs', doc), 'utf8')
  return [...text.matchAll(BLOCK)].map((m) => ({ kind: m[1]!, args: m[2]!.split(' '), body: m[3]! }))
}

describe.each(['pipelines.md', 'plugins.md'])('docs/%s', (doc) => {
  const found = blocks(doc)
  it('has tested examples', () => expect(found.length).toBeGreaterThanOrEqual(2))
  for (const b of found) {
    it(`${b.kind} ${b.args.join(' ')}`, async () => {
      if (b.kind === 'file') {
        expect(b.body).toBe(readFileSync(path.join(PACKAGE_ROOT, b.args[0]!), 'utf8'))
        return
      }
      const io = captureIo({ PLUGINS_DIR: FIXTURE_PLUGINS })
      expect(await runTry([...b.args.map((a) => path.join(PACKAGE_ROOT, a)), '--pretty'], io)).toBe(0)
      expect(io.out()).toBe(b.body)
    })
  }
})

it('the example pipeline passes `switchyard validate` without warnings', async () => {
  const io = captureIo({ PLUGINS_DIR: FIXTURE_PLUGINS })
  expect(await runValidate([path.join(PACKAGE_ROOT, 'test/fixtures/docs/style-gate.yaml')], io)).toBe(0)
  expect(io.out()).toBe('1 pipeline valid: style-gate\n')
})

it('the example pipeline also passes when copied alone into a folder of its own, as a reader does', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-docs-copy-'))
  copyFileSync(path.join(PACKAGE_ROOT, 'test/fixtures/docs/style-gate.yaml'), path.join(dir, 'style-gate.yaml'))
  const io = captureIo({ PLUGINS_DIR: FIXTURE_PLUGINS })
  expect(await runValidate([path.join(dir, 'style-gate.yaml')], io)).toBe(0)
  expect(io.out()).toBe('1 pipeline valid: style-gate\n')
})

it('every YAML block of docs/*.md is valid YAML (a reader copies them)', () => {
  const dir = path.join(PACKAGE_ROOT, 'docs')
  const broken: string[] = []
  for (const doc of readdirSync(dir).filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(path.join(dir, doc), 'utf8')
    for (const m of text.matchAll(/```ya?ml\n([\s\S]*?)```/g)) {
      const errors = parseDocument(m[1]!).errors
      if (errors.length) broken.push(`${doc}: ${errors[0]!.message.split('\n')[0]}`)
    }
  }
  expect(broken).toEqual([])
})
