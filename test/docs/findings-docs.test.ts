// The examples of docs/findings.md and the `issues` example of docs/pipelines.md are real: the
// issue text is what issueText() writes, the JSON has the fields the route answers, and the
// pipeline snippet loads with the outputs it claims. docs/pipelines.md lists the engine's own
// finding codes as src/engine/engine-findings.ts declares them.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { ENGINE_CODES_MARKERS, ENGINE_MESSAGES, engineCodesTable } from '../../src/engine/engine-findings.js'
import { loadPipelines } from '../../src/engine/load-pipelines.js'
import { toFindingRecords } from '../../src/findings/finding-records.js'
import { issueFindings, issueText } from '../../src/findings/issue-text.js'
import { pipelineYaml, testDeps, writePipelines } from '../engine/helpers.js'

const doc = (name: string) => readFileSync(path.join(PACKAGE_ROOT, 'docs', name), 'utf8')
const after = (text: string, marker: string, lang = '\\w*') => new RegExp(`<!-- ${marker} -->\\n\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(text)?.[1]

describe('docs/findings.md', () => {
  const text = doc('findings.md')
  it('shows the issue text issueText() writes', () => {
    const records = toFindingRecords([
      { check: 'placeholders', severity: 'error', message: 'Placeholder {name} is missing.', span: { start: 6, end: 12, in: 'source' } },
      { check: 'whitespace', severity: 'warning', message: 'Double space', span: { start: 35, end: 37 } },
    ], { source: 'Hello {name}, you have {count} new messages', translation: 'Bonjour, vous avez {count} nouveaux  messages' })
    expect(after(text, 'issue-text-example')).toBe(`${issueText(issueFindings(records), { pipelineName: 'QA gate', hash: '3f2a9c1b0d4e5f60' })}\n`)
  })

  it('shows a JSON answer with the fields of a findings entry', () => {
    const block = /<!-- findings-json-example -->[\s\S]*?```json\n([\s\S]*?)```/.exec(text)![1]!
    const entry = (JSON.parse(block) as { data: Array<Record<string, unknown>> }).data[0]!
    expect(Object.keys(entry).sort()).toEqual(['at', 'domain', 'findings', 'hash', 'issues', 'key', 'languageId', 'organizationId', 'outcome', 'output', 'pipeline', 'projectId', 'resolves', 'sentBack', 'stepId', 'stringId'])
  })

  it('documents the settings it names', async () => {
    const { OPTIONS } = await import('../../src/config/options.js')
    for (const o of [OPTIONS.findingsRetentionDays, OPTIONS.findingsMax, OPTIONS.commentsMaxInFlight]) expect(text).toContain(`\`${o.env}\``)
    expect(text).toContain(`| \`FINDINGS_RETENTION_DAYS\` | \`${OPTIONS.findingsRetentionDays.default}\``)
    expect(text).toContain(`| \`FINDINGS_MAX\` | \`${OPTIONS.findingsMax.default}\``)
  })
})

describe('docs/pipelines.md: the issues example', () => {
  it('loads, with issues on the output it names', async () => {
    const snippet = after(doc('pipelines.md'), 'issues-example', 'yaml')!
    const r = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(`checks: []\n${snippet}`) }).paths, testDeps())
    if (!r.ok) throw new Error(JSON.stringify(r.errors))
    expect(r.warnings).toEqual([])
    expect(r.set.get('t')!.issues).toEqual({ outputs: ['failed'] })
    await r.set.close(0)
  })
})

describe('docs/pipelines.md: the presets example', () => {
  // A reader copies it: it named a check `standard` does not have, and the load refused it.
  it('loads, with its overrides applied', async () => {
    const snippet = after(doc('pipelines.md'), 'presets-example', 'yaml')!
    const r = await loadPipelines(writePipelines({ 'p.yaml': pipelineYaml(`${snippet}route:\n  - to: passed\n`) }).paths, testDeps())
    if (!r.ok) throw new Error(JSON.stringify(r.errors))
    expect(r.warnings).toEqual([])
    await r.set.close(0)
  })
})

describe('docs/pipelines.md: the engine\'s finding codes', () => {
  it('lists every code the engine declares, as generated (npm run docs:plugins writes it)', () => {
    const text = doc('pipelines.md')
    const start = text.indexOf(ENGINE_CODES_MARKERS.start)
    const end = text.indexOf(ENGINE_CODES_MARKERS.end)
    expect(start).toBeGreaterThan(-1)
    expect(end).toBeGreaterThan(start)
    const table = text.slice(start + ENGINE_CODES_MARKERS.start.length, end).trim()
    expect(table).toBe(engineCodesTable())
    for (const code of Object.keys(ENGINE_MESSAGES)) expect(table).toContain(`| \`${code}\` |`)
  })
})
