import { PluginTester } from '../../src/engine/plugin-tester.js'
import regex from './index.js'

new PluginTester().run(regex, {
  valid: [
    { source: 'Save', translation: 'Enregistrer', options: { target: { forbid: '\\s{2,}' } } },
  ],
  invalid: [
    { source: 'Save file', translation: 'Enregistrer  le fichier', options: { target: { forbid: '\\s{2,}' } }, findings: [{ message: 'must not match', span: { start: 11, end: 13 } }] },
  ],
})
