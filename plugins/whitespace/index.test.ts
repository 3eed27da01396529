import { PluginTester } from '../../src/engine/plugin-tester.js'
import whitespace from './index.js'

new PluginTester().run(whitespace, {
  valid: [
    { source: 'Name: ', translation: 'Nom\u00a0: ' },
    { name: 'French NNBSP before ? and inside « »', source: 'Delete "draft"?', translation: 'Supprimer «\u202fbrouillon\u202f»\u202f?' },
    { name: 'Swiss French numbers', source: 'Total: 1000 CHF', translation: 'Total\u202f: 1\u202f000\u00a0CHF', targetLanguage: 'fr-CH' },
    { name: 'CJK drops the trailing space', source: 'Name: ', translation: '名前：', targetLanguage: 'ja' },
    { name: 'Thai without spaces, ZWSP word breaks', source: 'Save the file ', translation: 'บันทึก\u200bไฟล์', targetLanguage: 'th' },
    { name: 'Persian ZWNJ', source: 'Messages', translation: 'پیام\u200cها', targetLanguage: 'fa' },
    { name: 'Hindi ZWJ', source: 'Save', translation: 'सहेजें क्\u200dष', targetLanguage: 'hi' },
    { name: 'RLM in Hebrew with embedded Latin', source: 'Open Windows 11', translation: 'פתח את Windows 11\u200f', targetLanguage: 'he' },
    { source: 'Line one\nLine two', translation: 'Строка один\nСтрока два', targetLanguage: 'ru' },
    { name: 'Czech NBSP after a one-letter preposition', source: 'in Prague', translation: 'v\u00a0Praze', targetLanguage: 'cs' },
    { name: 'doubled space kept from the source', source: 'One.  Two.', translation: 'Ένα.  Δύο.', targetLanguage: 'el' },
    { name: 'emoji ZWJ sequence', source: 'Family 👪', translation: 'Familie 👨\u200d👩\u200d👧', targetLanguage: 'de' },
  ],
  invalid: [
    { source: ' Save', translation: 'Enregistrer', findings: [{ code: 'leading-whitespace', in: 'translation', message: 'Leading whitespace differs from the source: none instead of 1 space' }] },
    { source: 'Total: ', translation: 'Итого:', targetLanguage: 'ru', findings: [{ code: 'trailing-whitespace', in: 'translation', message: 'Trailing whitespace' }] },
    { source: 'Line one\nLine two', translation: 'سطر واحد سطر اثنان', targetLanguage: 'ar', findings: [{ code: 'line-breaks', message: 'has 0 line breaks; the source has 1' }] },
    { name: 'line break count matters in CJK too', source: 'Line one\nLine two', translation: '第一行\n\n第二行', targetLanguage: 'zh-CN', findings: [{ code: 'line-breaks', message: 'has 2 line breaks' }] },
    { source: 'Save the file', translation: 'Speichern  Sie die Datei', targetLanguage: 'de', findings: [{ code: 'doubled-space', span: { start: 9, end: 11, in: 'translation' } }] },
    { name: 'stray ZWSP in Latin text', source: 'Save file', translation: 'Enregistrer\u200b le fichier', findings: [{ code: 'invisible-character', in: 'translation', message: 'U+200B ZERO WIDTH SPACE' }] },
    { name: 'stray NBSP between long words', source: 'Save file', translation: 'Datei\u00a0speichern', targetLanguage: 'de', findings: [{ code: 'invisible-character', in: 'translation', message: 'U+00A0 NO-BREAK SPACE' }] },
    { name: 'BOM', source: 'Hello', translation: '\ufeffΓεια', targetLanguage: 'el', findings: [{ code: 'invisible-character', in: 'translation', message: 'BYTE ORDER MARK' }] },
    { name: 'RLM in a left-to-right language', source: 'Open', translation: 'Öffnen\u200f', targetLanguage: 'de', findings: [{ code: 'invisible-character', in: 'translation', message: 'RIGHT-TO-LEFT MARK' }] },
    { name: 'trailing newline lost', source: 'Done\n', translation: 'เสร็จ', targetLanguage: 'th', findings: [{ code: 'trailing-whitespace', in: 'translation', message: 'Trailing whitespace differs from the source: none instead of 1 line break' }] },
    { source: 'Hello world', translation: 'नमस्ते  दुनिया', targetLanguage: 'hi', findings: [{ code: 'doubled-space', in: 'translation' }] },
  ],
})
