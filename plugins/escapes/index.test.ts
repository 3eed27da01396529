import { PluginTester } from '../../src/engine/plugin-tester.js'
import escapes from './index.js'

new PluginTester().run(escapes, {
  valid: [
    { source: 'First line\\nSecond line', translation: 'Première ligne\\nDeuxième ligne' },
    { name: 'no escapes', source: 'Save', translation: 'Сохранить', targetLanguage: 'ru' },
    { name: 'Arabic with tab', source: 'Name:\\tValue', translation: 'الاسم:\\tالقيمة', targetLanguage: 'ar' },
    { name: 'Hebrew with two line breaks', source: 'A\\n\\nB', translation: 'א\\n\\nב', targetLanguage: 'he' },
    { name: 'Japanese typographic quotes instead of \\"', source: 'Click \\"Save\\"', translation: '「保存」をクリック', targetLanguage: 'ja' },
    { name: 'French guillemets', source: 'Click \\"Save\\"', translation: 'Cliquez sur « Enregistrer »' },
    { name: 'Android apostrophe escaped', source: 'Don\\\'t save', translation: 'Ne pas l\\\'enregistrer' },
    { name: 'backslash in a path', source: 'Saved to C:\\\\Users', translation: 'Αποθηκεύτηκε στο C:\\\\Users', targetLanguage: 'el' },
    { name: 'unicode escape replaced by its character', source: 'Loading\\u2026', translation: 'Загрузка…', targetLanguage: 'ru' },
    { name: 'quoted pair added, Korean', source: 'Press OK', translation: '\\"확인\\"을 누르세요', targetLanguage: 'ko' },
    { name: 'NBSP typed as an escape', source: 'Total:', translation: 'Total\\u00A0:' },
    { name: 'Thai with \\r\\n', source: 'Line\\r\\nNext', translation: 'บรรทัด\\r\\nถัดไป', targetLanguage: 'th' },
    { name: 'Hindi, \\n escaped as \\\\n is a backslash then n', source: 'Type \\\\n for a new line', translation: 'नई पंक्ति के लिए \\\\n टाइप करें', targetLanguage: 'hi' },
  ],
  invalid: [
    { source: 'First line\\nSecond line', translation: 'Première ligne Deuxième ligne', findings: [{ code: 'missing-escape', span: { start: 10, end: 12, in: 'source' } }] },
    { name: 'added line break, Russian', source: 'Save the file', translation: 'Сохранить\\nфайл', targetLanguage: 'ru', findings: [{ code: 'extra-escape', span: { start: 9, end: 11, in: 'translation' } }] },
    { name: 'lost tab, Arabic', source: 'Name:\\tValue', translation: 'الاسم: القيمة', targetLanguage: 'ar', findings: [{ code: 'missing-escape', span: { start: 5, end: 7, in: 'source' } }] },
    { name: 'one line break of two, Hebrew', source: 'A\\n\\nB', translation: 'א\\nב', targetLanguage: 'he', findings: [{ code: 'missing-escape', span: { start: 3, end: 5, in: 'source' } }] },
    { name: 'unescaped quote, German', source: 'Click \\"Save\\"', translation: 'Klicken Sie auf "Speichern"', targetLanguage: 'de', findings: [{ code: 'unescaped-quote', span: { start: 16, end: 17, in: 'translation' } }] },
    { name: 'unescaped apostrophe, Italian', source: 'Don\\\'t save', translation: "Non salvare l'elemento", targetLanguage: 'it', findings: [{ code: 'unescaped-quote', in: 'translation', message: 'unescaped \'' }] },
    { name: 'lost backslash, Greek', source: 'Saved to C:\\\\Users', translation: 'Αποθηκεύτηκε στο C:Users', targetLanguage: 'el', findings: [{ code: 'missing-escape', span: { start: 11, end: 13, in: 'source' } }] },
    { name: 'lost unicode escape, Chinese', source: 'Wait\\u2026', translation: '请稍候', targetLanguage: 'zh-CN', findings: [{ code: 'missing-character-escape', in: 'source', message: '\\u2026' }] },
    { name: 'added control escape, Thai', source: 'Done', translation: 'เสร็จ\\u0007', targetLanguage: 'th', findings: [{ code: 'added-control-escape', span: { start: 5, end: 11, in: 'translation' } }] },
    { name: 'lost \\r, Hindi', source: 'Line\\r\\nNext', translation: 'पंक्ति\\nअगली', targetLanguage: 'hi', findings: [{ code: 'missing-escape', span: { start: 4, end: 6, in: 'source' } }] },
    { name: 'unbalanced quote added, Portuguese', source: 'Press OK', translation: 'Pressione \\"OK', targetLanguage: 'pt', findings: [{ code: 'unmatched-escaped-quote', message: 'The translation has 1 escaped quote (\\") where the source has 0' }] },
    { name: 'odd quote left, Spanish', source: 'Press \\"OK\\" or \\"Cancel\\"', translation: 'Pulse \\"Aceptar\\" o Cancelar\\"', targetLanguage: 'es', findings: [{ code: 'unmatched-escaped-quote', message: 'The translation has 3 escaped quote (\\") where the source has 4' }] },
  ],
})
