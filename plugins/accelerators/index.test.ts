import { PluginTester } from '../../src/engine/plugin-tester.js'
import accelerators from './index.js'

new PluginTester().run(accelerators, {
  valid: [
    { source: '&File', translation: '&Fichier' },
    { name: 'Russian, other letter', source: 'Save &As...', translation: 'Сохранить &как...', targetLanguage: 'ru' },
    { name: 'Japanese appended form', source: '&File', translation: 'ファイル(&F)', targetLanguage: 'ja' },
    { name: 'Chinese appended form', source: '&Open', translation: '打开(&O)', targetLanguage: 'zh-CN' },
    { name: 'Arabic', source: '&Edit', translation: '&تحرير', targetLanguage: 'ar' },
    { name: 'Hebrew', source: '&Edit', translation: '&עריכה', targetLanguage: 'he' },
    { name: 'Greek', source: '&Help', translation: '&Βοήθεια', targetLanguage: 'el' },
    { name: 'Hindi', source: '&Help', translation: '&सहायता', targetLanguage: 'hi' },
    { name: 'ampersand before a space', source: 'Terms & Conditions', translation: 'Conditions générales' },
    { name: 'doubled ampersand', source: 'Tom && Jerry', translation: 'Том и Джерри', targetLanguage: 'ru' },
    { name: 'entity', source: 'Save &amp; close', translation: 'Enregistrer et fermer' },
    { name: 'abbreviation', source: 'R&D department', translation: 'Abteilung Forschung und Entwicklung', targetLanguage: 'de' },
    { name: 'URL query', source: 'See https://example.com/?a=1&b=2', translation: 'Voir https://example.com/?a=1&b=2' },
    { name: 'GTK underscore', source: '_Save', translation: '_Speichern', targetLanguage: 'de', options: { markers: ['_'] } },
    { name: 'snake_case placeholder with underscore marker', source: 'Hello {user_name}', translation: 'Bonjour {user_name}', options: { markers: ['_'] } },
    { name: 'LibreOffice tilde', source: '~Open', translation: '~Öffnen', targetLanguage: 'de', options: { markers: ['~'] } },
  ],
  invalid: [
    { source: '&File', translation: 'Fichier', findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'Russian, lost', source: 'Save &As...', translation: 'Сохранить как...', targetLanguage: 'ru', findings: [{ code: 'missing-accelerator', span: { start: 5, end: 7, in: 'source' } }] },
    { name: 'Japanese, lost', source: '&File', translation: 'ファイル', targetLanguage: 'ja', findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'Arabic, two', source: '&Edit', translation: '&تحرير &ملف', targetLanguage: 'ar', findings: [{ code: 'extra-accelerator', span: { start: 7, end: 9, in: 'translation' } }] },
    { name: 'Hebrew, lost', source: '&Edit', translation: 'עריכה', targetLanguage: 'he', findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'Greek, doubled only', source: '&Help', translation: '&&Βοήθεια', targetLanguage: 'el', findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'Hindi, lost', source: '&Help', translation: 'सहायता', targetLanguage: 'hi', findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'Thai, lost', source: '&View', translation: 'มุมมอง', targetLanguage: 'th', findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'GTK underscore lost', source: '_Save', translation: 'Speichern', targetLanguage: 'de', options: { markers: ['_'] }, findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'tilde lost', source: '~Open', translation: 'Öffnen', targetLanguage: 'de', options: { markers: ['~'] }, findings: [{ code: 'missing-accelerator', span: { start: 0, end: 2, in: 'source' } }] },
    { name: 'one of two lost', source: '&Yes, &No', translation: '&Oui, Non', findings: [{ code: 'accelerator-count', message: '1 accelerator where the source has 2' }] },
  ],
})
