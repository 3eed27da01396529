import { PluginTester } from '../../src/engine/plugin-tester.js'
import plurals from './index.js'

const forms = (o: Record<string, string>) => Object.entries(o).map(([plural, text]) => ({ plural, text }))
const src = '{count, plural, one {# file} other {# files}}'

new PluginTester().run(plurals, {
  valid: [
    { name: 'not a plural string', source: 'Save', translation: 'Enregistrer' },
    { name: 'French', source: src, translation: '# fichiers', plurals: forms({ one: '# fichier', other: '# fichiers' }) },
    { name: 'Russian', source: src, translation: '# файла', targetLanguage: 'ru', plurals: forms({ one: '# файл', few: '# файла', many: '# файлов', other: '# файла' }) },
    { name: 'Arabic, six forms', source: src, translation: '# ملف', targetLanguage: 'ar', plurals: forms({ zero: 'لا ملفات', one: 'ملف واحد', two: 'ملفان', few: '# ملفات', many: '# ملفًا', other: '# ملف' }) },
    { name: 'Japanese, only other', source: src, translation: '# 個のファイル', targetLanguage: 'ja', plurals: forms({ other: '# 個のファイル' }) },
    { name: 'Chinese with an extra form', source: src, translation: '# 个文件', targetLanguage: 'zh-CN', plurals: forms({ one: '# 个文件', other: '# 个文件' }) },
    { name: 'Thai', source: src, translation: '# ไฟล์', targetLanguage: 'th', plurals: forms({ other: '# ไฟล์' }) },
    { name: 'Hebrew', source: src, translation: '# קבצים', targetLanguage: 'he', plurals: forms({ one: 'קובץ אחד', two: 'שני קבצים', other: '# קבצים' }) },
    { name: 'Hindi', source: src, translation: '# फ़ाइलें', targetLanguage: 'hi', plurals: forms({ one: '# फ़ाइल', other: '# फ़ाइलें' }) },
    { name: 'Spanish without the "many" of millions', source: src, translation: '# archivos', targetLanguage: 'es', plurals: forms({ one: '# archivo', other: '# archivos' }) },
    { name: 'Czech without the "many" of fractions', source: src, translation: '# souborů', targetLanguage: 'cs', plurals: forms({ one: '# soubor', few: '# soubory', other: '# souborů' }) },
    { name: 'Polish', source: src, translation: '# pliku', targetLanguage: 'pl', plurals: forms({ one: '# plik', few: '# pliki', many: '# plików', other: '# pliku' }) },
    { name: 'a language without CLDR plural rules needs only other (Māori)', source: src, translation: '# kōnae', targetLanguage: 'mi', plurals: forms({ other: '# kōnae' }) },
    { name: 'ignored category', source: src, translation: '# файла', targetLanguage: 'ru', options: { ignore: ['many'] }, plurals: forms({ one: '# файл', few: '# файла', other: '# файла' }) },
  ],
  invalid: [
    { name: 'Russian missing few and many', source: src, translation: '# файлов', targetLanguage: 'ru', plurals: forms({ one: '# файл', other: '# файлов' }), findings: [{ code: 'missing-plural-forms', message: 'Plural forms "few", "many" missing (ru needs one, few, many, other)' }] },
    { name: 'Arabic missing zero, two', source: src, translation: '# ملف', targetLanguage: 'ar', plurals: forms({ one: 'ملف', few: '# ملفات', many: '# ملفًا', other: '# ملف' }), findings: [{ code: 'missing-plural-forms', message: 'Plural forms "zero", "two" missing (ar needs zero, one, two, few, many, other)' }] },
    { name: 'Japanese empty other', source: src, translation: '', targetLanguage: 'ja', plurals: forms({ other: '' }), findings: [{ code: 'empty-plural-forms', message: 'Plural form "other" empty' }] },
    { name: 'French missing other', source: src, translation: '', plurals: forms({ one: '# fichier' }), findings: [{ code: 'missing-plural-forms', message: '"other" missing' }] },
    { name: 'Hebrew missing two', source: src, translation: '# קבצים', targetLanguage: 'he', plurals: forms({ one: 'קובץ אחד', other: '# קבצים' }), findings: [{ code: 'missing-plural-forms', message: 'Plural form "two" missing (he needs one, two, other)' }] },
    { name: 'Greek empty one (NBSP)', source: src, translation: '# αρχεία', targetLanguage: 'el', plurals: forms({ one: '\u00A0', other: '# αρχεία' }), findings: [{ code: 'empty-plural-forms', message: '"one" empty' }] },
    { name: 'Hindi missing one', source: src, translation: '# फ़ाइलें', targetLanguage: 'hi', plurals: forms({ other: '# फ़ाइलें' }), findings: [{ code: 'missing-plural-forms', message: 'Plural form "one" missing (hi needs one, other)' }] },
    { name: 'Ukrainian missing and empty', source: src, translation: '# файлів', targetLanguage: 'uk', plurals: forms({ one: '', few: '# файли', other: '# файлів' }), findings: [{ code: 'missing-plural-forms', message: 'Plural form "many" missing (uk needs one, few, many, other)' }, { code: 'empty-plural-forms', message: 'Plural form "one" empty' }] },
    { name: 'Polish missing many', source: src, translation: '# pliku', targetLanguage: 'pl', plurals: forms({ one: '# plik', few: '# pliki', other: '# pliku' }), findings: [{ code: 'missing-plural-forms', message: 'Plural form "many" missing (pl needs one, few, many, other)' }] },
    { name: 'Thai empty other', source: src, translation: ' ', targetLanguage: 'th', plurals: forms({ other: ' ' }), findings: [{ code: 'empty-plural-forms', message: 'Plural form "other" empty' }] },
  ],
})
