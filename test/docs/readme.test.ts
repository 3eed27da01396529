// The README's configuration table is generated from the option declarations, and its examples
// are copies of tested files: these tests fail when either drifts.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { TABLE_END, TABLE_START, optionsTable } from '../../src/config/options-table.js'

const readme = readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8')

describe('README', () => {
  it('starts with the demo and test commands', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!
    expect(firstBlock).toMatch(/^npm ci && npm run demo/m)
    expect(firstBlock).toMatch(/^npm ci && npm test/m)
  })

  it('has the current configuration table', () => {
    const start = readme.indexOf(TABLE_START)
    const end = readme.indexOf(TABLE_END)
    expect(start).toBeGreaterThan(0)
    expect(readme.slice(start + TABLE_START.length, end).trim()).toBe(optionsTable())
  })

  const blocks = [...readme.matchAll(/<!-- file: ([^>]+?) -->\n```\w*\n([\s\S]*?)```/g)]
  it('has the pipeline and plugin examples', () => expect(blocks.map((b) => b[1])).toEqual(['test/fixtures/docs/style-gate.yaml', 'test/fixtures/plugins/max-words.mjs']))
  for (const [, file, body] of blocks) {
    it(`shows ${file} as it is`, () => expect(body).toBe(readFileSync(path.join(PACKAGE_ROOT, file!), 'utf8')))
  }

  it('links only to files that exist', () => {
    for (const [, target] of readme.matchAll(/\]\(((?!https?:)[^)#]+)\)/g)) {
      expect(() => readFileSync(path.join(PACKAGE_ROOT, target!)), target).not.toThrow()
    }
  })
})

describe('docs/deployment.md', () => {
  const doc = readFileSync(path.join(PACKAGE_ROOT, 'docs', 'deployment.md'), 'utf8')
  it('its switchyard.env example works with `docker run --env-file`: no comment after a value', () => {
    const at = doc.indexOf('`switchyard.env` (never in the image')
    expect(at).toBeGreaterThan(0)
    const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(at))![1]!
    const settings = block.split('\n').filter((l) => /^[A-Z_]+=/.test(l))
    expect(settings.length).toBeGreaterThanOrEqual(8)
    // docker run --env-file keeps everything after `=` as the value, an inline `# ...` included.
    expect(settings.filter((l) => /\s#/.test(l))).toEqual([])
  })
})
