// The table test of docs/plugins.md's example plugin, run by `npx vitest run test/docs`.
import { PluginTester } from '../../src/engine/plugin-tester.js'
import type { PluginDefinition } from '../../src/engine/types.js'

const maxWords = (await import('../fixtures/plugins/max-words.mjs' as string)).default as PluginDefinition<never>

new PluginTester().run(maxWords, {
  valid: [
    { source: 'Save the file', translation: 'Enregistrer le fichier' },
    { source: 'Save', translation: 'Enregistrer maintenant', options: { ratio: 2 } },
  ],
  invalid: [
    {
      source: 'Save',
      translation: 'Enregistrer le fichier maintenant',
      findings: [{ severity: 'warning', message: 'The translation has 4 words; at most 2 are allowed.' }],
    },
    { source: 'One two three', translation: 'Un deux trois', options: { max: 2 }, findings: 1 },
  ],
})
