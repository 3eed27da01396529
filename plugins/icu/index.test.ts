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
    // A language may pluralize a plain count of the source.
    { name: 'Russian pluralizes a {count, number}', source: '{count, number} files', translation: '{count, plural, one {# файл} few {# файла} many {# файлов} other {# файла}}', targetLanguage: 'ru' },
    { name: 'Polish pluralizes a {count, number} with the count kept', source: 'Deleted {count, number} files', translation: 'Usunięto {count, plural, one {{count, number} plik} few {{count, number} pliki} many {{count, number} plików} other {{count, number} pliku}}', targetLanguage: 'pl' },
    { name: 'Arabic pluralizes a {n, number}', source: '{n, number} items', translation: '{n, plural, zero {لا عناصر} one {عنصر واحد} two {عنصران} few {# عناصر} many {# عنصرًا} other {# عنصر}}', targetLanguage: 'ar' },
    { name: 'Japanese writes a source plural as a plain count', source: '{count, plural, one {# file} other {# files}}', translation: '{count, number}個のファイル', targetLanguage: 'ja' },
    { name: 'Vietnamese writes a source plural as a plain count', source: '{count, plural, one {# file} other {# files}}', translation: '{count} tệp', targetLanguage: 'vi' },
    // Plural categories are those of the target language, not the source's.
    { name: 'Polish source, English target needs only one and other', source: '{n, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}', translation: '{n, plural, one {# file} other {# files}}', sourceLanguage: 'pl', targetLanguage: 'en' },
    { name: 'Russian source, Indonesian target needs only other', source: '{n, plural, one {# файл} few {# файла} many {# файлов} other {# файла}}', translation: '{n, plural, other {# berkas}}', sourceLanguage: 'ru', targetLanguage: 'id' },
    { name: 'French many (millions) is optional', source: en, translation: '{count, plural, one {# fichier} other {# fichiers}}', targetLanguage: 'fr' },
    { name: 'Czech needs one, few, other (many only for fractions)', source: en, translation: '{count, plural, one {# soubor} few {# soubory} other {# souborů}}', targetLanguage: 'cs' },
    // Argument types and styles kept.
    { name: 'currency kept', source: 'Total: {value, number, ::currency/USD}', translation: 'Gesamt: {value, number, ::currency/USD}', targetLanguage: 'de' },
    { name: 'date style kept', source: 'Due {d, date, short}', translation: 'Échéance {d, date, short}' },
    { name: 'select keys kept in another order', source: '{gender, select, male {He} female {She} other {They}} replied', translation: '{gender, select, female {Она} male {Он} other {Они}} ответили', targetLanguage: 'ru' },
    { name: 'select keys not checked when told so', source: '{gender, select, male {He} female {She} other {They}}', translation: '{gender, select, male {Αυτός} femal {Αυτή} other {Αυτοί}}', targetLanguage: 'el', options: { checkSelectKeys: false } },
    { name: '=0 stands for zero in Arabic', source: en, translation: '{count, plural, =0 {لا ملفات} one {ملف واحد} two {ملفان} few {# ملفات} many {# ملفًا} other {# ملف}}', targetLanguage: 'ar' },
    { name: 'a source that is not ICU is not checked', source: 'Use { to open a block', translation: 'Utilisez { pour ouvrir un bloc' },
  ],
  invalid: [
    { source: en, translation: '{count, plural, one {# fichier} other {# fichiers}', findings: [{ code: 'invalid-icu', in: 'translation', message: 'not valid ICU' }] },
    { source: en, translation: '{count, plural, one {# файл} other {# файлов}}', targetLanguage: 'ru', findings: [{ code: 'missing-plural-categories', in: 'translation', message: 'lacks the categories ru needs: few, many' }] },
    { source: en, translation: '{count, plural, one {ملف} other {# ملفات}}', targetLanguage: 'ar', findings: [{ code: 'missing-plural-categories', in: 'translation', message: 'zero, two, few, many' }] },
    { name: 'other is always required', source: en, translation: '{count, plural, one {# Datei}}', targetLanguage: 'de', findings: [{ code: 'invalid-icu', in: 'translation', message: 'not valid ICU' }] },
    { source: 'Hello {name}', translation: 'Привет, {имя}', targetLanguage: 'ru', options: { simpleArguments: true }, findings: [{ code: 'missing-argument', message: 'Missing ICU argument {name}' }, { code: 'extra-argument', message: '{имя} is not in the source' }] },
    { name: 'apostrophe quotes the argument', source: 'Delete {item}', translation: "Supprimer l'{item}", options: { simpleArguments: true }, findings: [{ code: 'missing-argument', message: 'apostrophe' }] },
    { source: 'Page {page, number} of {total, number}', translation: 'पृष्ठ {page, number}', targetLanguage: 'hi', findings: [{ code: 'missing-argument', message: '{total}' }] },
    { source: '{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}', translation: '{n, selectordinal, other {#°}}', targetLanguage: 'it', findings: [{ code: 'missing-plural-categories', in: 'translation', message: 'selectordinal {n} lacks the categories it needs: many' }] },
    { name: 'select key typo', source: '{gender, select, male {He} female {She} other {They}}', translation: '{gender, select, male {Αυτός} femal {Αυτή} other {Αυτοί}}', targetLanguage: 'el', findings: [{ code: 'unknown-select-key', in: 'translation', message: 'femal', severity: 'error' }] },
    { source: en, translation: '{count, plural, one {# plik} other {# plików}}', targetLanguage: 'pl', findings: [{ code: 'missing-plural-categories', span: { start: 0, end: 46, in: 'translation' } }] },
    { source: en, translation: '{count, plural, one {# plik} other {# plików}}', targetLanguage: 'pl', findings: [{ code: 'missing-plural-categories', in: 'translation' }] },
    // Argument types, styles and select keys must match the source.
    { name: 'currency dropped', source: 'Total: {value, number, ::currency/USD}', translation: 'Gesamt: {value}', targetLanguage: 'de', findings: [{ code: 'argument-type-changed', message: 'ICU argument {value} is {value, number, ::currency/USD} in the source but {value} in the translation', severity: 'error' }] },
    { name: 'currency changed', source: 'Total: {value, number, ::currency/USD}', translation: 'Total : {value, number, ::currency/EUR}', findings: [{ code: 'argument-type-changed', message: '::currency/EUR', severity: 'error' }] },
    { name: 'percent became plain number', source: '{p, number, percent} done', translation: '{p, number} 完了', targetLanguage: 'ja', findings: [{ code: 'argument-type-changed', message: '{p, number, percent} in the source', severity: 'error' }] },
    { name: 'select turned into a plain argument', source: '{gender, select, male {He} female {She} other {They}} replied', translation: '{gender} antwortete', targetLanguage: 'de', findings: [{ code: 'argument-type-changed', message: '{gender, select, …} in the source but {gender}', severity: 'error' }] },
    { name: 'select key renamed', source: '{gender, select, male {He} female {She} other {They}}', translation: '{gender, select, male {Il} femme {Elle} other {Iel}}', findings: [{ code: 'unknown-select-key', in: 'translation', message: 'keys the source does not have: femme', severity: 'error' }] },
    { name: 'select key renamed in Arabic', source: '{role, select, admin {Admin} other {User}}', translation: '{role, select, administrator {مسؤول} other {مستخدم}}', targetLanguage: 'ar', findings: [{ code: 'unknown-select-key', in: 'translation', message: 'administrator', severity: 'error' }] },
    { name: 'Russian drops the source plural: categories lost', source: '{count, plural, one {# file} other {# files}}', translation: '{count} файлов', targetLanguage: 'ru', findings: [{ code: 'argument-type-changed', message: '{count, plural, …} in the source but {count}', severity: 'error' }] },
    { name: 'date style changed is a warning', source: 'Due {d, date, short}', translation: 'Fällig am {d, date, long}', targetLanguage: 'de', findings: [{ code: 'argument-type-changed', message: '{d, date, short}', severity: 'warning' }] },
    { name: 'date became a number', source: 'Due {d, date, short}', translation: 'Termin {d, number}', targetLanguage: 'pl', findings: [{ code: 'argument-type-changed', severity: 'error' }] },
    { name: 'invalid ICU: message and span', source: en, translation: '{count, plural, one {# fichier} other {# fichiers}', findings: [{ code: 'invalid-icu', span: { start: 0, end: 1, in: 'translation' }, message: /^The translation is not valid ICU MessageFormat: EXPECT_ARGUMENT_CLOSING_BRACE$/ }] },
    { name: 'an apostrophe before the brace quotes the plural away', source: en, translation: "Supprimer l'{count, plural, one {# fichier} other {# fichiers}}", findings: [{ code: 'missing-argument', message: "Missing ICU argument {count} (an apostrophe before a brace quotes it in ICU: write ’ or '')" }] },
    { name: '=1 does not stand for Russian one (1, 21, 31...)', source: en, translation: '{count, plural, =1 {один файл} few {# файла} many {# файлов} other {# файла}}', targetLanguage: 'ru', findings: [{ code: 'missing-plural-categories', span: { start: 0, end: 77, in: 'translation' }, message: /^plural \{count\} lacks the categories ru needs: one$/ }] },
    { name: 'selectordinal turned into plural', source: '{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}', translation: '{n, plural, one {#.} other {#.}}', targetLanguage: 'de', findings: [{ code: 'argument-type-changed', message: 'ICU argument {n} is {n, selectordinal, …} in the source but {n, plural, …} in the translation' }] },
    { name: 'a skeleton token dropped', source: '{v, number, ::currency/EUR unit-width-narrow} left', translation: '{v, number, ::currency/EUR} restant', findings: [{ code: 'argument-type-changed', message: 'ICU argument {v} is {v, number, ::currency/EUR unit-width-narrow} in the source but {v, number, ::currency/EUR} in the translation' }] },
  ],
})
