import { PluginTester } from '../../src/engine/plugin-tester.js'
import icu from './index.js'

const en = '{count, plural, one {# file} other {# files}}'

new PluginTester().run(icu, {
  valid: [
    { name: 'plain text is not checked', source: 'Hello world', translation: 'Bonjour {' },
    { source: en, translation: '{count, plural, one {# fichier} other {# fichiers}}' },
    { source: en, translation: '{count, plural, one {# файл} few {# файла} many {# файлов} other {# файла}}', targetLanguage: 'ru' },
    { name: 'Japanese needs only other', source: en, translation: '{count, plural, other {#個のファイル}}', targetLanguage: 'ja' },
    { source: en, translation: '{count, plural, zero {لا ملفات} one {ملف واحد} two {ملفان} few {# ملفات} many {# ملفًا} other {# ملف}}', targetLanguage: 'ar' },
    { name: 'extra categories are fine', source: en, translation: '{count, plural, =0 {Keine Dateien} zero {–} one {# Datei} other {# Dateien}}', targetLanguage: 'de' },
    { name: '=1 stands for one in English-like rules', source: en, translation: '{count, plural, =1 {Eine Datei} other {# Dateien}}', targetLanguage: 'de' },
    { source: 'Hello {name}', translation: 'שלום {name}', targetLanguage: 'he' },
    { name: 'simple arguments are left to the placeholders check by default', source: 'Delete {item}?', translation: "Supprimer l'{item} ?" },
    { source: '{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}', translation: '{n, selectordinal, other {#.}}', targetLanguage: 'de' },
    { source: '{gender, select, male {He} female {She} other {They}} replied', translation: '{gender, select, male {Αυτός} female {Αυτή} other {Αυτοί}} απάντησε', targetLanguage: 'el' },
    { name: 'a select branch may be dropped', source: '{gender, select, male {He} female {She} other {They}} replied', translation: '{gender, select, other {他们}}回复了', targetLanguage: 'zh-CN' },
    { source: 'Page {page, number} of {total, number}', translation: 'पृष्ठ {page, number} / {total, number}', targetLanguage: 'hi' },
  ],
  invalid: [
    { source: en, translation: '{count, plural, one {# fichier} other {# fichiers}', findings: [{ message: 'not valid ICU' }] },
    { source: en, translation: '{count, plural, one {# файл} other {# файлов}}', targetLanguage: 'ru', findings: [{ message: 'lacks the categories ru needs: few, many' }] },
    { source: en, translation: '{count, plural, one {ملف} other {# ملفات}}', targetLanguage: 'ar', findings: [{ message: 'zero, two, few, many' }] },
    { name: 'other is always required', source: en, translation: '{count, plural, one {# Datei}}', targetLanguage: 'de', findings: [{ message: 'not valid ICU' }] },
    { source: 'Hello {name}', translation: 'Привет, {имя}', targetLanguage: 'ru', options: { simpleArguments: true }, findings: [{ message: 'Missing ICU argument {name}' }, { message: '{имя} is not in the source' }] },
    { name: 'apostrophe quotes the argument', source: 'Delete {item}', translation: "Supprimer l'{item}", options: { simpleArguments: true }, findings: [{ message: 'apostrophe' }] },
    { source: 'Page {page, number} of {total, number}', translation: 'पृष्ठ {page, number}', targetLanguage: 'hi', findings: [{ message: '{total}' }] },
    { source: '{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}', translation: '{n, selectordinal, other {#°}}', targetLanguage: 'it', findings: [{ message: 'selectordinal {n} lacks the categories it needs: many' }] },
    { name: 'select key typo', source: '{gender, select, male {He} female {She} other {They}}', translation: '{gender, select, male {Αυτός} femal {Αυτή} other {Αυτοί}}', targetLanguage: 'el', findings: [{ message: 'femal', severity: 'warning' }] },
    { source: en, translation: '{count, plural, one {# plik} other {# plików}}', targetLanguage: 'pl', findings: [{ message: 'plural {count} lacks the categories pl needs: few, many', span: { start: 0, end: 46, in: 'translation' } }] },
  ],
})
