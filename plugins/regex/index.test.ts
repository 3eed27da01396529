import { describe, expect, it } from 'vitest'
import { PluginTester, runPluginCase } from '../../src/engine/plugin-tester.js'
import regex from './index.js'

const noDoubleSpace = { target: { forbid: '\\s{2,}' } }
// French typography: a narrow or normal no-break space before ; : ! ?
const frenchSpacing = { languages: ['fr'], target: { forbid: '[^\\s\\u00A0\\u202F][;:!?](?=\\s|$)', message: 'No no-break space before "{match}"' } }
const noLatinInRussian = { target: { forbid: '\\p{Script=Latin}{4,}', message: 'Latin word "{match}"' } }

new PluginTester().run(regex, {
  valid: [
    { source: 'Save', translation: 'Enregistrer', options: noDoubleSpace },
    { source: 'Open the file', translation: 'Открыть файл', targetLanguage: 'ru', options: noDoubleSpace },
    { source: 'Are you sure?', translation: 'Êtes-vous sûr\u202F?', options: frenchSpacing },
    { name: 'rule for another language', source: 'Are you sure?', translation: 'Sind Sie sicher?', targetLanguage: 'de', options: frenchSpacing },
    { source: 'Open the file', translation: 'Открыть файл PDF', targetLanguage: 'ru', options: noLatinInRussian },
    { source: 'Settings', translation: 'الإعدادات', targetLanguage: 'ar', options: { target: { require: '\\p{Script=Arabic}' } } },
    { source: 'Settings', translation: 'הגדרות', targetLanguage: 'he', options: { target: { forbid: '[\\u0600-\\u06FF]' } } },
    { source: 'Settings', translation: '設定', targetLanguage: 'ja', options: { target: { forbid: '[｡-ﾟ]', message: 'half-width katakana' } } },
    { source: 'Settings', translation: 'การตั้งค่า', targetLanguage: 'th', options: { target: { forbid: ' $' } } },
    { source: 'Settings', translation: 'सेटिंग्स', targetLanguage: 'hi', options: { target: { forbid: '\\.$' } } },
    { source: 'Settings', translation: 'Ρυθμίσεις', targetLanguage: 'el', options: { target: { forbid: ';', flags: '' } } },
    { name: 'source rule', source: 'Hello {name}', translation: 'Bonjour {name}', options: { source: { require: '\\{\\w+\\}' } } },
  ],
  invalid: [
    { source: 'Save file', translation: 'Enregistrer  le fichier', options: noDoubleSpace, findings: [{ code: 'forbidden-pattern', span: { start: 11, end: 13, in: 'translation' } }] },
    { name: 'every match', source: 'Save the file', translation: 'Enregistrer  le  fichier', options: noDoubleSpace, findings: [{ code: 'forbidden-pattern', span: { start: 11, end: 13, in: 'translation' } }, { code: 'forbidden-pattern', span: { start: 15, end: 17, in: 'translation' } }] },
    { source: 'Are you sure?', translation: 'Êtes-vous sûr?', options: frenchSpacing, findings: [{ code: 'forbidden-pattern', in: 'translation', message: 'No no-break space before "r?"' }] },
    { source: 'Open the file', translation: 'Открыть файл Document', targetLanguage: 'ru', options: noLatinInRussian, findings: [{ code: 'forbidden-pattern', span: { start: 13, end: 21, in: 'translation' } }] },
    { source: 'Settings', translation: 'Settings', targetLanguage: 'ar', options: { target: { require: '\\p{Script=Arabic}', message: 'not Arabic' } }, findings: [{ code: 'required-pattern-missing', message: 'not Arabic' }] },
    { source: 'Settings', translation: 'הגדרות ملف', targetLanguage: 'he', options: { target: { forbid: '[\\u0600-\\u06FF]+' } }, findings: [{ code: 'forbidden-pattern', span: { start: 7, end: 10, in: 'translation' } }] },
    { source: 'Settings', translation: 'ｾｯﾃｨﾝｸﾞ', targetLanguage: 'ja', options: { target: { forbid: '[｡-ﾟ]+', message: 'half-width katakana' } }, findings: [{ code: 'forbidden-pattern', in: 'translation', message: 'half-width katakana' }] },
    { source: 'Settings', translation: 'การตั้งค่า ', targetLanguage: 'th', options: { target: { forbid: ' $' } }, findings: [{ code: 'forbidden-pattern', span: { start: 10, end: 11, in: 'translation' } }] },
    { source: 'Settings', translation: 'सेटिंग्स.', targetLanguage: 'hi', options: { target: { forbid: '\\.$' } }, findings: [{ code: 'forbidden-pattern', span: { start: 8, end: 9, in: 'translation' } }] },
    { name: 'case-insensitive flag', source: 'Settings', translation: 'Ρυθμίσεις TODO', targetLanguage: 'el', options: { target: { forbid: 'todo', flags: 'iu' } }, findings: [{ code: 'forbidden-pattern', span: { start: 10, end: 14, in: 'translation' } }] },
    { name: 'source rule', source: 'Hello', translation: 'Bonjour', options: { source: { require: '\\{\\w+\\}' } }, findings: [{ code: 'required-pattern-missing', message: 'The source must match' }] },
    { name: 'at most maxFindings', source: 'x', translation: 'a  b  c  d', options: { ...noDoubleSpace, maxFindings: 2 }, findings: [{ code: 'forbidden-pattern', span: { start: 1, end: 3, in: 'translation' } }, { code: 'forbidden-pattern', span: { start: 4, end: 6, in: 'translation' } }] },
  ],
})

describe('regex messages', () => {
  it('quote the match as the translator wrote it, $ patterns and all (never read as a replacement pattern)', async () => {
    for (const [translation, forbid, expected] of [["Prix: $' EUR", "\\$'", "Found $' here"], ['Cost $$', '\\$\\$', 'Found $$ here'], ['a $& b', '\\$&', 'Found $& here'], ['x $` y', '\\$`', 'Found $` here']] as const) {
      const findings = await runPluginCase(regex, { source: 'Price', translation, options: { target: { forbid, message: 'Found {match} here' } } })
      expect(findings.map((f) => f.message), translation).toEqual([expected])
    }
  })
})

describe('regex options', () => {
  it('a bad pattern is a load error naming the option', async () => {
    await expect(runPluginCase(regex, { source: 'a', translation: 'b', options: { target: { forbid: '(' } } })).rejects.toThrow(/target\.forbid is not a valid regular expression/)
  })
})
