import { PluginTester } from '../../src/engine/plugin-tester.js'
import numbers from './index.js'

new PluginTester().run(numbers, {
  valid: [
    { source: 'You have 25 new messages', translation: 'Vous avez 25 nouveaux messages' },
    { name: 'Arabic-Indic digits and decimal separator', source: 'Version 3.5 costs 1,200 dollars', translation: 'الإصدار ٣٫٥ يكلف ١٬٢٠٠ دولار', targetLanguage: 'ar' },
    { name: 'Persian digits', source: '15 files', translation: '۱۵ فایل', targetLanguage: 'fa' },
    { name: 'Devanagari digits', source: '42 items', translation: '४२ आइटम', targetLanguage: 'hi' },
    { name: 'Thai digits', source: 'Page 12', translation: 'หน้า ๑๒', targetLanguage: 'th' },
    { name: 'full-width digits', source: 'Step 12 of 30', translation: 'ステップ１２／３０', targetLanguage: 'ja' },
    { name: 'German separators', source: 'Total: 1,000.50 EUR', translation: 'Summe: 1.000,50 EUR', targetLanguage: 'de' },
    { name: 'French NNBSP grouping', source: '1,000,000 users', translation: '1\u202f000\u202f000 utilisateurs' },
    { name: 'Swiss apostrophe', source: 'CHF 12,500.75', translation: 'CHF 12’500.75', targetLanguage: 'de-CH' },
    { name: 'Russian space grouping', source: '25,000 rubles', translation: '25 000 рублей', targetLanguage: 'ru' },
    { name: 'Indian grouping', source: '100,000 views', translation: '1,00,000 दृश्य', targetLanguage: 'hi' },
    { name: 'Chinese myriads', source: '10,000 users', translation: '1万用户', targetLanguage: 'zh-CN' },
    { name: 'spelled-out small number', source: '1 file selected', translation: 'Ένα αρχείο επιλέχθηκε', targetLanguage: 'el' },
    { name: 'numbers in placeholders are ignored', source: '%1$s of %2$s', translation: '%2$s 中的 %1$s', targetLanguage: 'zh-CN' },
    { name: 'ICU selectors are not numbers', source: '{n, plural, =0 {No files} other {# files}}', translation: '{n, plural, =0 {Нет файлов} other {# файлов}}', targetLanguage: 'ru' },
    { name: 'dates reordered', source: 'Updated 2024-03-15', translation: 'Aktualisiert am 15.03.2024', targetLanguage: 'de' },
    { name: 'URL digits are ignored', source: 'See https://example.com/v2/docs', translation: 'Voir https://example.com/v2/docs' },
    { name: 'Hebrew, percent', source: 'Save 30% now', translation: 'חסכו 30% עכשיו', targetLanguage: 'he' },
  ],
  invalid: [
    { source: 'You have 25 new messages', translation: 'Vous avez 52 nouveaux messages', findings: [{ code: 'missing-number', in: 'source', message: 'Number 25 is missing' }, { code: 'extra-number', in: 'translation', message: 'Number 52 is not in the source' }] },
    { source: 'Version 3.5', translation: 'الإصدار ٣٫٦', targetLanguage: 'ar', findings: [{ code: 'missing-number', span: { start: 8, end: 11, in: 'source' } }, { code: 'extra-number', span: { start: 8, end: 11, in: 'translation' } }] },
    { source: 'Page 12', translation: 'หน้า ๑๓', targetLanguage: 'th', findings: [{ code: 'missing-number', span: { start: 5, end: 7, in: 'source' } }, { code: 'extra-number', span: { start: 5, end: 7, in: 'translation' } }] },
    { source: 'Total: 1,000.50 EUR', translation: 'Summe: 1.000,05 EUR', targetLanguage: 'de', findings: [{ code: 'missing-number', span: { start: 7, end: 15, in: 'source' } }, { code: 'extra-number', span: { start: 7, end: 15, in: 'translation' } }] },
    { source: 'Up to 500 MB', translation: 'До МБ', targetLanguage: 'ru', findings: [{ code: 'missing-number', span: { start: 6, end: 9, in: 'source' } }] },
    { name: 'a small number replaced by another', source: 'Step 2 of 5', translation: 'Schritt 2 von 6', targetLanguage: 'de', findings: [{ code: 'missing-number', in: 'source', message: 'Number 5 is missing' }, { code: 'extra-number', in: 'translation', message: 'Number 6 is not in the source' }] },
    { source: 'Wait 30 seconds', translation: '30 秒待ってから 60 秒', targetLanguage: 'ja', findings: [{ code: 'extra-number', in: 'translation', message: 'Number 60 is not in the source' }] },
    { source: '42 items', translation: '४३ आइटम', targetLanguage: 'hi', findings: [{ code: 'missing-number', span: { start: 0, end: 2, in: 'source' } }, { code: 'extra-number', span: { start: 0, end: 2, in: 'translation' } }] },
    { source: 'Limit: 2,048 characters', translation: 'Όριο: 2.084 χαρακτήρες', targetLanguage: 'el', findings: [{ code: 'missing-number', span: { start: 7, end: 12, in: 'source' } }, { code: 'extra-number', span: { start: 6, end: 11, in: 'translation' } }] },
    { name: 'every number when spelledOutUpTo is -1', source: '3 files', translation: 'trois fichiers', options: { spelledOutUpTo: -1 }, findings: [{ code: 'missing-number', span: { start: 0, end: 1, in: 'source' } }] },
  ],
})
