import { PluginTester } from '../../src/engine/plugin-tester.js'
import punctuation from './index.js'

new PluginTester().run(punctuation, {
  valid: [
    { source: 'Delete this file?', translation: 'Supprimer ce fichier\u202f?' },
    { source: 'Delete this file?', translation: 'Supprimer ce fichier ?' },
    { source: 'Delete this file?', translation: '¿Eliminar este archivo?', targetLanguage: 'es' },
    { source: 'Delete this file?', translation: 'このファイルを削除しますか？', targetLanguage: 'ja' },
    { source: 'Delete this file?', translation: 'هل تريد حذف هذا الملف؟', targetLanguage: 'ar' },
    { source: 'Delete this file?', translation: 'Διαγραφή αυτού του αρχείου;', targetLanguage: 'el' },
    { source: 'File saved.', translation: 'फ़ाइल सहेजी गई।', targetLanguage: 'hi' },
    { name: 'Thai drops the full stop', source: 'File saved.', translation: 'บันทึกไฟล์แล้ว', targetLanguage: 'th' },
    { name: 'Chinese UI text may drop 。', source: 'File saved.', translation: '文件已保存', targetLanguage: 'zh-CN' },
    { source: 'Loading...', translation: 'Загрузка…', targetLanguage: 'ru' },
    { source: 'Name:', translation: 'Nom :' },
    { source: 'Name:', translation: '名前：', targetLanguage: 'ja' },
    { name: 'closing quotes and tags do not hide the mark', source: 'Click <b>"Save".</b>', translation: 'Klicken Sie auf „Speichern“.', targetLanguage: 'de' },
    { name: 'Armenian question mark on the word', source: 'Are you sure?', translation: 'Համոզվա՞ծ եք։', targetLanguage: 'hy' },
    { name: 'Canadian French: no space before ?', source: 'Delete?', translation: 'Supprimer?', targetLanguage: 'fr-CA' },
    { name: 'URL colons are not punctuation', source: 'See https://example.com', translation: 'Voir https://example.com' },
    { name: 'placeholder at the end', source: 'Saved: %s', translation: 'Gespeichert: %s', targetLanguage: 'de' },
    { source: 'Welcome!', translation: '¡Bienvenido!', targetLanguage: 'es' },
    { source: 'Are you sure?', translation: 'האם אתה בטוח?', targetLanguage: 'he' },
    { name: 'Greek question mark U+037E', source: 'Continue?', translation: 'Συνέχεια\u037e', targetLanguage: 'el' },
    { name: 'a trailing placeholder may move', source: 'Error: %s', translation: '%s のエラー', targetLanguage: 'ja' },
    // Direction marks, isolates and zero-width characters after the final mark do not hide it
    // (they read as "no punctuation" before).
    { name: 'RLM after the full stop', source: 'Saved.', translation: 'נשמר.\u200f', targetLanguage: 'he' },
    { name: 'Arabic in RLI…PDI', source: 'Saved.', translation: '\u2067تم الحفظ.\u2069', targetLanguage: 'ar' },
    { name: 'ZWSP after the full stop', source: 'Saved.', translation: 'Gespeichert.\u200b', targetLanguage: 'de' },
    { name: 'LRM after a Spanish question mark', source: 'Really?', translation: '¿De verdad?\u200e', targetLanguage: 'es' },
  ],
  invalid: [
    { source: 'Delete this file?', translation: 'Supprimer ce fichier.', findings: [{ code: 'end-punctuation', message: 'The source ends with a question mark, the translation with a full stop', severity: 'error' }] },
    { source: 'Delete this file?', translation: 'Supprimer ce fichier?', findings: [{ code: 'french-spacing', severity: 'warning', span: { start: 20, end: 21, in: 'translation' } }] },
    { source: 'Delete this file?', translation: 'Eliminar este archivo?', targetLanguage: 'es', findings: [{ code: 'spanish-question-mark' }] },
    { source: 'Great job!', translation: 'Buen trabajo!', targetLanguage: 'es', findings: [{ code: 'spanish-exclamation-mark' }] },
    { source: 'File saved.', translation: 'Datei gespeichert', targetLanguage: 'de', findings: [{ code: 'end-punctuation', message: 'translation with no punctuation' }] },
    { source: 'File saved', translation: 'Файл сохранён.', targetLanguage: 'ru', findings: [{ code: 'end-punctuation', message: 'The source ends with no punctuation, the translation with a full stop' }] },
    { source: 'Delete this file?', translation: 'هل تريد حذف هذا الملف', targetLanguage: 'ar', findings: [{ code: 'end-punctuation', message: 'The source ends with a question mark, the translation with no punctuation' }] },
    { source: 'Name:', translation: 'Όνομα', targetLanguage: 'el', findings: [{ code: 'end-punctuation', message: 'a colon' }] },
    { source: 'Loading...', translation: '正在加载。', targetLanguage: 'zh-CN', findings: [{ code: 'end-punctuation', message: 'an ellipsis' }] },
    { source: 'Welcome!', translation: 'Willkommen.', targetLanguage: 'de', findings: [{ code: 'end-punctuation', severity: 'warning' }] },
    { source: 'Name: John', translation: 'Name : John', targetLanguage: 'de', findings: [{ code: 'space-before-punctuation', span: { start: 4, end: 5, in: 'translation' } }] },
    { source: 'Hello, world.', translation: 'Привет , мир.', targetLanguage: 'ru', findings: [{ code: 'space-before-punctuation', in: 'translation', message: 'Space before “,”' }] },
    { source: 'Delete this file?', translation: 'क्या यह फ़ाइल हटाएँ।', targetLanguage: 'hi', findings: [{ code: 'end-punctuation', message: 'The source ends with a question mark, the translation with a full stop' }] },
  ],
})
