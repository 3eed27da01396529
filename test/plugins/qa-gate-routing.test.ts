// How the real qa-gate pipeline routes the families of issue 18 ("catch more, alarm less"): each
// broken translation goes back to translation, each correct one is approved. And the override
// example of plugins/presets.md loads and restores the old, laxer behaviour of its checks.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'
import { loadPipelines, type PipelineSet } from '../../src/engine/load-pipelines.js'
import { items, loadOne, pipelineYaml, testDeps } from '../engine/helpers.js'

type Case = [target: string, source: string, translation: string]

const SENT_BACK: Case[] = [
  ['en', 'Sauvez le rhinocéros', 'Save the the rhino'],
  ['fr', 'Save the file', 'Enregistrer le le fichier'],
  ['pl', 'Log in', 'Zaloguj się się teraz'],
  ['ru', 'Settings (advanced)', 'Настройки'],
  ['de', 'Delete (permanently)', 'Endgültig löschen'],
  ['fr', 'Build $(BuildId) failed', 'Le build a échoué'],
  ['de', 'Hello $USER$', 'Hallo $USER'],
  ['id', 'Deleted $count files', '$jumlah berkas dihapus'],
  ['ja', 'Copy %1 to %2', '%1 をコピー'],
  ['ar', 'You have :count messages', 'لديك رسائل'],
  ['ru', '&brandName; is ready', 'Готово'],
  ['fr', 'Hello ~a!', 'Bonjour !'],
  ['ru', 'Version @VERSION@', 'Версия'],
  ['de', '%(n)d%% done', '%(n)d % erledigt'],
  ['ru', '{} of {} files', '{} файлов'],
  ['fr', 'Read the [guide](https://example.com/guide).', 'Lisez le [guide] (https://example.com/guide).'],
  ['pl', 'Run `npm install` first', 'Uruchom najpierw `npm zainstaluj`'],
  ['de', 'This is **important**', 'Dies ist **wichtig'],
  ['de', 'Total: {value, number, ::currency/USD}', 'Gesamt: {value}'],
  ['fr', '{gender, select, male {He} female {She} other {They}}', '{gender, select, male {Il} femme {Elle} other {Iel}}'],
  ['ja', '<img src="en/logo.png" alt="Logo">', '<img src="ja/logo.png" alt="ロゴ">'],
]

const APPROVED: Case[] = [
  ['fr', 'We meet at noon', 'Nous nous retrouvons à midi'],
  ['id', 'People came', 'Orang orang datang'],
  ['vi', 'Slowly', 'Từ từ thôi'],
  ['de', 'I know that this is the best', 'Ich weiß, dass das das Beste ist'],
  ['de', 'Delete file(s)?', 'Dateien löschen?'],
  ['ar', '<p lang="en" dir="ltr">Hello</p>', '<p lang="ar" dir="rtl">مرحبا</p>'],
  ['de', 'Total: %\'6.3f km', 'Gesamt: %\'6.3f km'],
  ['ru', '%-5d items, change %+d', '%-5d элементов, изменение %+d'],
  ['ru', '{count, number} files', '{count, plural, one {# файл} few {# файла} many {# файлов} other {# файла}}'],
  ['pl', '{count} files', '{count, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}'],
  ['en', '{n, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}', '{n, plural, one {# file} other {# files}}'],
  ['de', 'Opens at 10:30. Note: bring ID', 'Öffnet um 10:30. Hinweis: Ausweis mitbringen'],
  ['vi', 'Only $5 today', 'Chỉ $5 hôm nay'],
  ['tr', 'Save 50% now', 'Şimdi %50 tasarruf edin'],
  ['ja', 'This is **important** now', 'これは**重要**です'],
  ['de', 'Price* may vary', 'Der Preis* kann variieren'],
  ['fr', 'Welcome to &brandShortName;', 'Bienvenue dans &brandShortName;'],
]

const open: PipelineSet[] = []
afterAll(async () => { await Promise.all(open.splice(0).map((s) => s.close(0))) })

async function route(yamlFileOrText: { file: string } | { text: string }, cases: Case[], key = 't') {
  let set: PipelineSet
  if ('file' in yamlFileOrText) {
    const r = await loadPipelines([yamlFileOrText.file], testDeps())
    if (!r.ok) throw new Error(r.errors.map((e) => e.message).join('\n'))
    set = r.set
  } else {
    set = (await loadOne(yamlFileOrText.text)).set
  }
  open.push(set)
  const pipeline = set.get(key)!
  const results = await pipeline.run(items(cases.map(([targetLanguage, source, translation]) => ({ sourceLanguage: targetLanguage === 'en' ? 'fr' : 'en', targetLanguage, source, translation }))))
  return results.map((r, i) => ({ case: cases[i]!.join(' | '), output: r.output, errors: r.findings.filter((f) => f.severity === 'error').map((f) => `${f.check}: ${f.message}`) }))
}

describe('qa-gate routing', () => {
  const file = path.join(PACKAGE_ROOT, 'pipelines', 'qa-gate.yaml')
  it('sends back each broken family', async () => {
    for (const r of await route({ file }, SENT_BACK, 'qa-gate')) expect(r, r.case).toMatchObject({ output: 'failed' })
  })
  it('approves each correct translation', async () => {
    for (const r of await route({ file }, APPROVED, 'qa-gate')) expect(r, r.case).toMatchObject({ output: 'passed', errors: [] })
  })
})

describe('plugins/presets.md override example', () => {
  const doc = readFileSync(path.join(PACKAGE_ROOT, 'plugins', 'presets.md'), 'utf8')
  const block = /```yaml\n(checks:\n  - uses: standard\n    overrides:[\s\S]*?)```/.exec(doc)![1]!
  it('loads, and lowers double words, bracket counts and Markdown back to no error', async () => {
    const text = pipelineYaml(`${block}route:\n  - if: errors > 0\n    to: failed\n  - to: passed\n`)
    const cases: Case[] = [SENT_BACK[0]!, SENT_BACK[3]!, SENT_BACK[15]!]
    for (const r of await route({ text }, cases)) expect(r, r.case).toMatchObject({ output: 'passed' })
  })
})
