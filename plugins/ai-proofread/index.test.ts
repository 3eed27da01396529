// The PluginTester table for ai-proofread: the tester's context has no OPENAI_* environment, so
// the fake server's URL and a key go in through the plugin's own options.
import { afterAll } from 'vitest'
import { PluginTester } from '../../src/engine/plugin-tester.js'
import { startFakeOpenAi } from '../../src/emulator/fake-openai.js'
import aiProofread from './index.js'

const fake = await startFakeOpenAi()
afterAll(() => fake.stop())
const options = { baseUrl: fake.url, apiKey: 'test-key', retryBaseMs: 10 }

new PluginTester().run(aiProofread, {
  valid: [
    { source: 'Save the file', translation: 'Enregistrer le fichier', options },
    { source: 'You have 3 new messages', translation: 'Sie haben 3 neue Nachrichten', targetLanguage: 'de', options },
    { name: 'a correct string with errorAt critical', source: 'Save', translation: 'Enregistrer', options: { ...options, errorAt: 'critical' } },
  ],
  invalid: [
    { source: 'Delete 12 files', translation: 'Supprimer des fichiers', options, findings: [{ code: 'accuracy', severity: 'error', message: /^accuracy \(major\): the number 12/, suggestion: 'include 12' }] },
    { source: 'Save the file', translation: 'TODO', options, findings: [{ code: 'accuracy', severity: 'error', span: { start: 0, end: 4, in: 'translation' } }] },
    { source: 'Save the file', translation: 'Enregistrer  le fichier', options, findings: [{ code: 'fluency', severity: 'warning', span: { start: 11, end: 13, in: 'translation' } }] },
    { source: 'Save the file', translation: 'Enregistrer  le fichier', options: { ...options, errorAt: 'critical' }, findings: [{ code: 'fluency', in: 'translation', severity: 'info' }] },
    { source: 'Open 2 XXX', translation: 'Ouvrir XXX', options: { ...options, errorAt: 'minor' }, findings: [{ code: 'accuracy', severity: 'error', message: 'number 2' }, { code: 'accuracy', severity: 'error', span: { start: 7, end: 10, in: 'translation' } }] },
  ],
})
