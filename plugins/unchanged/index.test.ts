import { PluginTester } from '../../src/engine/plugin-tester.js'
import unchanged from './index.js'

new PluginTester().run(unchanged, {
  valid: [
    { source: 'Save your changes', translation: 'Enregistrez vos modifications' },
    { source: 'Save your changes', translation: 'Сохраните изменения', targetLanguage: 'ru' },
    { source: 'Save your changes', translation: 'احفظ تغييراتك', targetLanguage: 'ar' },
    { source: 'Save your changes', translation: '変更を保存します', targetLanguage: 'ja' },
    { source: 'Save your changes', translation: 'บันทึกการเปลี่ยนแปลง', targetLanguage: 'th' },
    { source: 'Save your changes', translation: 'Αποθηκεύστε τις αλλαγές', targetLanguage: 'el' },
    { name: 'a single word that is the same in German', source: 'Name', translation: 'Name', targetLanguage: 'de' },
    { name: 'OK', source: 'OK', translation: 'OK', targetLanguage: 'he' },
    { name: 'brand name', source: 'Google Drive', translation: 'Google Drive', targetLanguage: 'hi' },
    { name: 'placeholders and numbers only', source: '{count} / %d', translation: '{count} / %d', targetLanguage: 'ru' },
    { name: 'URL only', source: 'https://example.com/help', translation: 'https://example.com/help', targetLanguage: 'ko' },
    { name: 'e-mail and punctuation', source: 'support@example.com:', translation: 'support@example.com:', targetLanguage: 'ar' },
    { name: 'same language, other region', source: 'Open the colour picker', translation: 'Open the colour picker', sourceLanguage: 'en-US', targetLanguage: 'en-GB' },
    { name: 'allowed words', source: 'Powered by Switchyard engine', translation: 'Powered by Switchyard engine', options: { allow: ['Powered by Switchyard engine'] } },
    { name: 'product name with digits', source: 'iPhone 15 Pro Max', translation: 'iPhone 15 Pro Max', targetLanguage: 'zh-CN' },
    { name: 'too short to tell', source: 'of {n}', translation: 'of {n}', targetLanguage: 'es' },
  ],
  invalid: [
    { source: 'Save your changes', translation: 'Save your changes', findings: [{ code: 'untranslated', span: { start: 0, end: 17, in: 'translation' } }] },
    { name: 'Cyrillic target left in English', source: 'Delete this file?', translation: 'Delete this file?', targetLanguage: 'ru', findings: [{ code: 'untranslated', span: { start: 0, end: 17, in: 'translation' } }] },
    { name: 'case and spacing ignored', source: 'Delete this file?', translation: ' delete  this file? ', targetLanguage: 'de', findings: [{ code: 'untranslated', span: { start: 0, end: 20, in: 'translation' } }] },
    { name: 'Arabic', source: 'You have new messages', translation: 'You have new messages', targetLanguage: 'ar', findings: [{ code: 'untranslated', span: { start: 0, end: 21, in: 'translation' } }] },
    { name: 'Hebrew', source: 'You have new messages', translation: 'You have new messages', targetLanguage: 'he', findings: [{ code: 'untranslated', span: { start: 0, end: 21, in: 'translation' } }] },
    { name: 'Japanese', source: 'Check your connection', translation: 'Check your connection', targetLanguage: 'ja', findings: [{ code: 'untranslated', span: { start: 0, end: 21, in: 'translation' } }] },
    { name: 'Thai', source: 'Check your connection', translation: 'Check your connection', targetLanguage: 'th', findings: [{ code: 'untranslated', span: { start: 0, end: 21, in: 'translation' } }] },
    { name: 'Hindi', source: 'Check your connection', translation: 'Check your connection', targetLanguage: 'hi', findings: [{ code: 'untranslated', span: { start: 0, end: 21, in: 'translation' } }] },
    { name: 'Greek', source: 'Welcome back, {name}!', translation: 'Welcome back, {name}!', targetLanguage: 'el', findings: [{ code: 'untranslated', span: { start: 0, end: 21, in: 'translation' } }] },
    { name: 'French source to German', source: 'Enregistrer le fichier', translation: 'Enregistrer le fichier', sourceLanguage: 'fr', targetLanguage: 'de', findings: [{ code: 'untranslated', span: { start: 0, end: 22, in: 'translation' } }] },
    { name: 'single word as a warning when asked', source: 'Settings', translation: 'Settings', targetLanguage: 'de', options: { singleWords: 'warning' }, findings: [{ code: 'untranslated', in: 'translation', severity: 'warning' }] },
    { name: 'case-sensitive comparison', source: 'Open the file', translation: 'Open the file', targetLanguage: 'it', options: { ignoreCase: false }, findings: [{ code: 'untranslated', span: { start: 0, end: 13, in: 'translation' } }] },
  ],
})
