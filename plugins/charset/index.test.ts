import { describe, expect, it } from 'vitest'
import { instantiatePlugin } from '../../src/engine/instantiate-plugin.js'
import { PluginTester, runPluginCase, testContext } from '../../src/engine/plugin-tester.js'
import type { PluginDefinition } from '../../src/engine/types.js'
import charset from './index.js'

new PluginTester().run(charset, {
  valid: [
    { source: 'Open the file', translation: 'Ouvrir le fichier' },
    { source: 'Open the file', translation: 'Открыть файл', targetLanguage: 'ru' },
    { name: 'Greek with a brand name and emoji', source: 'Open Google Drive 🚀', translation: 'Άνοιγμα του Google Drive 🚀', targetLanguage: 'el' },
    { name: 'Arabic with digits and marks', source: 'You have 3 messages', translation: 'لديك ٣ رسائل، \u200Fانقر هنا', targetLanguage: 'ar' },
    { name: 'Hebrew with niqqud', source: 'Peace', translation: 'שָׁלוֹם', targetLanguage: 'he' },
    { name: 'Japanese kana, kanji, prolonged mark', source: 'Open the server', translation: 'サーバーを開く（ファイル）', targetLanguage: 'ja' },
    { name: 'Korean hangul', source: 'Settings', translation: '설정', targetLanguage: 'ko' },
    { name: 'Chinese traditional with bopomofo', source: 'Hello', translation: '你好 ㄋㄧˇ', targetLanguage: 'zh-TW' },
    { name: 'Thai', source: 'Settings', translation: 'การตั้งค่า', targetLanguage: 'th' },
    { name: 'Hindi with danda', source: 'Settings saved.', translation: 'सेटिंग्स सहेजी गईं।', targetLanguage: 'hi' },
    { name: 'Cyrillic with a Latin brand, hyphenated', source: 'PDF file', translation: 'PDF-файл', targetLanguage: 'uk' },
    { name: 'language name kept from the source', source: 'Language: Русский', translation: 'Langue : Русский', targetLanguage: 'fr' },
    { name: 'Serbian in Latin script', source: 'Open the file', translation: 'Otvori datoteku', targetLanguage: 'sr' },
    { name: 'allowed extra character', source: 'The value of pi', translation: 'Значение π', targetLanguage: 'ru', options: { allow: '[π]' } },
    { name: 'Greek letters as symbols', source: 'Alpha version, 10 um', translation: 'α版、10 μm', targetLanguage: 'ja' },
    { name: 'Uzbek in Cyrillic', source: 'Settings', translation: 'Созламалар', targetLanguage: 'uz' },
    { name: 'tabs and newlines', source: 'A\tB\nC', translation: 'А\tБ\nВ', targetLanguage: 'bg' },
    { name: 'Greek letters allowed by the allow option', source: 'Alpha and beta', translation: 'Альфа и бета (αβ)', targetLanguage: 'ru', options: { allow: '[αβγ]' } },
    { name: 'tab and CRLF the source lacks are the whitespace check\'s concern', source: 'Name Value', translation: 'Имя\tЗначение\r\n', targetLanguage: 'ru' },
    { name: 'control character kept from the source', source: 'Bell\u0007', translation: 'Cloche\u0007' },
    { name: 'a unit with a Greek letter at the end of a word', source: 'Resistance: 10 kiloohm', translation: 'Widerstand: 10 kΩ', targetLanguage: 'de' },
    { name: 'Latin and Han in one word', source: 'PDF version', translation: 'PDF版', targetLanguage: 'ja' },
  ],
  invalid: [
    { name: 'Cyrillic letters in Greek', source: 'Open the file', translation: 'Άνοιγμα του фαйл', targetLanguage: 'el', findings: [{ code: 'mixed-script-word', span: { start: 12, end: 16, in: 'translation' } }] },
    { name: 'Cyrillic word in Greek', source: 'Open the file', translation: 'Άνοιγμα файл', targetLanguage: 'el', findings: [{ code: 'foreign-letters', in: 'translation', message: 'Cyrillic letters "файл" in a translation written in Greek' }] },
    { name: 'Latin lookalike inside a Russian word', source: 'Hello', translation: 'Пpивет', targetLanguage: 'ru', findings: [{ code: 'mixed-script-word', span: { start: 0, end: 6, in: 'translation' } }] },
    { name: 'Cyrillic lookalike inside a French word', source: 'Open', translation: 'Оuvrir', findings: [{ code: 'mixed-script-word', in: 'translation', message: 'mixes' }] },
    { name: 'replacement character', source: 'Cafe', translation: 'Caf\uFFFD', targetLanguage: 'es', findings: [{ code: 'broken-character', span: { start: 3, end: 4, in: 'translation' } }] },
    { name: 'control character', source: 'Save', translation: 'Speichern\u0007', targetLanguage: 'de', findings: [{ code: 'broken-character', in: 'translation', message: 'control character U+0007' }] },
    { name: 'Hebrew in Arabic', source: 'Settings', translation: 'الإعدادات שלום', targetLanguage: 'ar', findings: [{ code: 'foreign-letters', in: 'translation', message: 'Hebrew' }] },
    { name: 'Arabic in Hebrew', source: 'Settings', translation: 'הגדרות الإعدادات', targetLanguage: 'he', findings: [{ code: 'foreign-letters', span: { start: 7, end: 16, in: 'translation' } }] },
    { name: 'Hangul in Japanese', source: 'Settings', translation: '設定 설정', targetLanguage: 'ja', findings: [{ code: 'foreign-letters', in: 'translation', message: 'Hangul' }] },
    { name: 'Thai in Hindi', source: 'Settings', translation: 'सेटिंग्स การตั้งค่า', targetLanguage: 'hi', findings: [{ code: 'foreign-letters', in: 'translation', message: 'Thai' }] },
    { name: 'Devanagari in Thai', source: 'Settings', translation: 'การตั้งค่า सेटिंग्स', targetLanguage: 'th', findings: [{ code: 'foreign-letters', span: { start: 11, end: 19, in: 'translation' } }] },
    { name: 'Latin refused when told so', source: 'Settings', translation: 'Настройки Options', targetLanguage: 'ru', options: { allowLatin: false }, findings: [{ code: 'foreign-letters', in: 'translation', message: 'Latin' }] },
    { name: 'Uzbek in Latin script, said so', source: 'Settings', translation: 'Созламалар', targetLanguage: 'uz-Latn', findings: [{ code: 'foreign-letters', span: { start: 0, end: 10, in: 'translation' } }] },
    { name: 'scripts override', source: 'Settings', translation: 'Настройки', targetLanguage: 'ru', options: { scripts: ['Greek'] }, findings: [{ code: 'foreign-letters', span: { start: 0, end: 9, in: 'translation' } }] },
    { name: 'Greek letters without the allow option', source: 'Alpha and beta', translation: 'Альфа и бета (αβ)', targetLanguage: 'ru', findings: [{ code: 'foreign-letters', span: { start: 14, end: 16, in: 'translation' }, message: 'Greek letters "αβ" in a translation written in Cyrillic (and Latin)' }] },
    { name: 'a Greek word of two letters is not a symbol', source: 'Phase', translation: 'Фаза βγ', targetLanguage: 'ru', findings: [{ code: 'foreign-letters', span: { start: 5, end: 7, in: 'translation' }, message: 'letters "βγ"' }] },
    { name: 'the lookalike is the minority script, even first', source: 'Open', translation: 'Оuvrir', findings: [{ code: 'mixed-script-word', span: { start: 0, end: 6, in: 'translation' }, message: 'The word "Оuvrir" mixes Latin letters with Cyrillic "О"' }] },
    { name: 'two lookalike scripts in a Latin word', source: 'Open', translation: 'Оuvrιr', findings: [{ code: 'mixed-script-word', span: { start: 0, end: 6, in: 'translation' }, message: 'mixes Latin letters with Cyrillic "О", Greek "ι"' }] },
    { name: 'replacement character, message', source: 'Cafe', translation: 'Café \uFFFD', targetLanguage: 'es', findings: [{ code: 'broken-character', span: { start: 5, end: 6, in: 'translation' }, message: 'The translation contains the replacement character U+FFFD (a broken encoding)' }] },
    { name: 'escape control character, upper-case hex', source: 'Done', translation: 'Fertig\u001B', targetLanguage: 'de', findings: [{ code: 'broken-character', span: { start: 6, end: 7, in: 'translation' }, message: 'The translation contains the control character U+001B' }] },
    { name: 'lone surrogate', source: 'Smile', translation: 'Souriez \uD83D', findings: [{ code: 'broken-character', span: { start: 8, end: 9, in: 'translation' }, message: 'The translation contains a lone surrogate U+D83D' }] },
    { name: 'Latin refused: no "(and Latin)"', source: 'Settings', translation: 'Настройки Options', targetLanguage: 'ru', options: { allowLatin: false }, findings: [{ code: 'foreign-letters', span: { start: 10, end: 17, in: 'translation' }, message: /^Latin letters "Options" in a translation written in Cyrillic$/ }] },
    { name: 'a language written in Latin: no "(and Latin)"', source: 'Settings', translation: 'Sozlamalar Созламалар', targetLanguage: 'uz-Latn', findings: [{ code: 'foreign-letters', span: { start: 11, end: 21, in: 'translation' }, message: /written in Latin$/ }] },
  ],
})

describe('charset options at load', () => {
  it('refuses an allow option that is not a regular expression', async () => {
    await expect(runPluginCase(charset, { source: 'a', translation: 'b', options: { allow: '[a-' } })).rejects.toThrow('charset: option "allow" is not a valid character class')
  })
  it('refuses an unknown script at load, before any string is checked', async () => {
    const definition = charset as unknown as PluginDefinition<never>
    await expect(instantiatePlugin(definition, { scripts: ['Klingonish'] }, testContext(definition))).rejects.toThrow('charset: option "scripts": "Klingonish" is not a Unicode script name or code')
  })
})
