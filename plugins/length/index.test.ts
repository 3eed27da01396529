import { PluginTester } from '../../src/engine/plugin-tester.js'
import length from './index.js'

const long = 'Your changes have been saved and will be visible to everyone shortly.'

new PluginTester().run(length, {
  valid: [
    { source: 'Save', translation: 'Enregistrer', maxLength: 12 },
    { name: 'very short source is not ratio-checked', source: 'OK', translation: 'Einverstanden', targetLanguage: 'de' },
    { name: 'graphemes, not code units', source: 'Family', translation: '👨‍👩‍👧‍👦 семья', maxLength: 7, targetLanguage: 'ru' },
    { name: 'Devanagari conjuncts count once each', source: 'Hindi', translation: 'हिन्दी', maxLength: 3, targetLanguage: 'hi' },
    { name: 'CJK target may be much shorter', source: long, translation: '更改已保存，很快所有人都能看到。', targetLanguage: 'zh-CN' },
    { name: 'Thai target is not too short', source: long, translation: 'บันทึกแล้ว', targetLanguage: 'th' },
    { name: 'CJK source, English target', source: '保存しました', translation: 'Your changes have been saved', sourceLanguage: 'ja', targetLanguage: 'en' },
    { source: long, translation: 'Ihre Änderungen wurden gespeichert und sind in Kürze für alle sichtbar.', targetLanguage: 'de' },
    { source: 'Sign up now', translation: 'Зарегистрироваться сейчас', targetLanguage: 'ru' },
    { source: long, translation: 'تم حفظ التغييرات وستكون مرئية للجميع قريبًا.', targetLanguage: 'ar' },
    { source: 'Save', translation: 'Αποθήκευση', options: { maxLength: 10 }, targetLanguage: 'el' },
  ],
  invalid: [
    { source: 'Save', translation: 'Enregistrer', maxLength: 8, findings: [{ code: 'over-limit', severity: 'error', span: { start: 8, end: 11, in: 'translation' } }] },
    { name: 'option limit', source: 'Save', translation: 'Αποθήκευση', options: { maxLength: 6 }, targetLanguage: 'el', findings: [{ code: 'over-limit', in: 'translation', message: 'limit is 6' }] },
    { name: 'the smaller limit wins', source: 'Save', translation: 'Speichern', maxLength: 20, options: { maxLength: 5 }, targetLanguage: 'de', findings: [{ code: 'over-limit', in: 'translation', message: 'limit is 5' }] },
    { source: 'Delete', translation: 'Удалить этот файл навсегда без возможности восстановления', targetLanguage: 'ru', findings: [{ code: 'too-long', severity: 'warning', message: 'times as long' }] },
    { source: long, translation: 'Sauvegardé.', findings: [{ code: 'too-short', severity: 'warning', message: 'only 16%' }] },
    { source: long, translation: 'נשמר', targetLanguage: 'he', findings: [{ code: 'too-short', severity: 'warning', message: 'only' }] },
    { name: 'maxLength applies to CJK too', source: 'Settings', translation: '应用程序设置', maxLength: 4, targetLanguage: 'zh-CN', findings: [{ code: 'over-limit', span: { start: 4, end: 6, in: 'translation' } }] },
    { name: 'plural forms are held to the limit', source: '{n} files', translation: '{n} ملفات', maxLength: 10, targetLanguage: 'ar', plurals: [{ plural: 'one', text: 'ملف واحد' }, { plural: 'other', text: '{n} من الملفات الكثيرة' }], findings: [{ code: 'over-limit', message: 'Plural form' }] },
    { source: 'Open the settings', translation: 'दस्तावेज़ की सेटिंग्स खोलें और फिर सभी विकल्पों को ध्यान से देखें और बदलें, फिर सहेजें और बंद करें', targetLanguage: 'hi', findings: [{ code: 'too-long', message: 'The translation is 3.5 times as long as the source (60 vs 17 characters; at most 3)', severity: 'warning' }] },
    { source: 'Cancel', translation: 'ยกเลิก', maxLength: 3, targetLanguage: 'th', findings: [{ code: 'over-limit', span: { start: 3, end: 6, in: 'translation' } }] },
    { name: 'a fractional limit (a local try file\'s 2.5) counts whole characters', source: 'Save', translation: 'Enregistrer', maxLength: 2.5, findings: [{ code: 'over-limit', message: 'limit is 2', span: { start: 2, end: 11, in: 'translation' } }] },
    { name: 'a plural form sent without its text is empty', source: '{n} files', translation: '{n} fichiers', maxLength: 3, plurals: [{ plural: 'one', text: null as unknown as string }, { plural: 'other', text: '{n} fichiers' }], findings: [{ code: 'over-limit', span: { start: 3, end: 12, in: 'translation' } }] },
  ],
})
