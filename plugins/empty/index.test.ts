import { PluginTester } from '../../src/engine/plugin-tester.js'
import empty from './index.js'

new PluginTester().run(empty, {
  valid: [
    { source: 'Save', translation: 'Enregistrer' },
    { source: 'Open file', translation: 'Файл открыть', targetLanguage: 'ru' },
    { source: 'Settings', translation: 'الإعدادات', targetLanguage: 'ar' },
    { source: 'Settings', translation: 'הגדרות', targetLanguage: 'he' },
    { source: 'Settings', translation: '設定', targetLanguage: 'ja' },
    { source: 'Settings', translation: 'การตั้งค่า', targetLanguage: 'th' },
    { source: 'Settings', translation: 'सेटिंग्स', targetLanguage: 'hi' },
    { source: 'Settings', translation: 'Ρυθμίσεις', targetLanguage: 'el' },
    { name: 'blank source, blank translation', source: '   ', translation: '' },
    { name: 'empty source', source: '', translation: '' },
    { name: 'a single visible character', source: 'A', translation: 'А', targetLanguage: 'ru' },
    { name: 'whitespace allowed when told so', source: 'Space', translation: ' ', options: { whitespaceIsEmpty: false } },
  ],
  invalid: [
    { source: 'Save', translation: '', findings: [{ code: 'empty-translation' }] },
    { source: 'Save', translation: '   ', findings: [{ code: 'blank-translation', span: { start: 0, end: 3, in: 'translation' } }] },
    { name: 'NBSP only', source: 'Save', translation: '\u00A0', targetLanguage: 'de', findings: [{ code: 'blank-translation', in: 'translation' }] },
    { name: 'zero-width space only', source: 'Settings', translation: '\u200B', targetLanguage: 'ja', findings: [{ code: 'blank-translation', span: { start: 0, end: 1, in: 'translation' } }] },
    { name: 'RTL mark only', source: 'Settings', translation: '\u200F', targetLanguage: 'ar', findings: [{ code: 'blank-translation', span: { start: 0, end: 1, in: 'translation' } }] },
    { name: 'tabs and newlines', source: 'Settings', translation: '\n\t', targetLanguage: 'he', findings: [{ code: 'blank-translation', span: { start: 0, end: 2, in: 'translation' } }] },
    { name: 'ideographic space', source: 'Settings', translation: '\u3000', targetLanguage: 'zh-CN', findings: [{ code: 'blank-translation', span: { start: 0, end: 1, in: 'translation' } }] },
    { name: 'empty Thai', source: 'Settings', translation: '', targetLanguage: 'th', findings: [{ code: 'empty-translation' }] },
    { name: 'empty Greek', source: 'Settings', translation: '', targetLanguage: 'el', findings: [{ code: 'empty-translation' }] },
    { name: 'empty Hindi', source: 'Settings', translation: ' \u200D ', targetLanguage: 'hi', findings: [{ code: 'blank-translation', span: { start: 0, end: 3, in: 'translation' } }] },
    { name: 'empty when whitespace allowed', source: 'Space', translation: '', options: { whitespaceIsEmpty: false }, findings: [{ code: 'empty-translation' }] },
  ],
})
