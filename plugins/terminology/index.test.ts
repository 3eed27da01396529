import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PluginTester, runPluginCase } from '../../src/engine/plugin-tester.js'
import terminology from './index.js'
import { parseTbx } from './parse-tbx.js'
import { parseGlossaryCsv } from './parse-glossary-csv.js'
import { decodeXmlEntities, findAll, parseXml, textOf } from './parse-xml.js'

const inline = {
  terms: [
    { source: 'file', target: 'Datei', language: 'de', forbidden: ['File'] },
    { source: 'folder', target: 'папка', language: 'ru' },
    { source: 'settings', target: 'الإعدادات', language: 'ar' },
    { source: 'account', target: ['λογαριασμός', 'λογαριασμού'], language: 'el' },
    { source: 'cloud', target: '云', language: 'zh' },
    { source: 'Switchyard', target: 'Switchyard', caseSensitive: true },
    { forbidden: ['nuage'], language: 'fr' },
  ],
}
const more = {
  terms: [
    { source: 'sample', target: 'образец', language: 'ru' },
    { source: 'game', target: 'игра', language: 'ru' },
    { source: 'sign in', target: 'se connecter', language: 'fr' },
    { source: '文件', target: 'fichier', language: 'fr', sourceLanguage: 'zh-CN' },
    { source: 'file', target: 'arquivo', language: 'pt_BR' },
    { source: 'folder', target: 'pasta', language: 'pt' },
    { source: 'document', target: 'Dokument', language: 'de-DE' },
    { source: 'cloud storage', target: 'Cloud-Speicher', language: 'de' },
    { forbidden: ['Cloud'], language: 'de' },
    { source: 'directory', target: 'Ordner', forbidden: ['Verzeichnis'], language: 'de' },
    { source: 'trash', target: 'Papierkorb', language: 'de' },
    { source: 'trash', target: 'Mülleimer', language: 'de' },
    { source: 'cloud', forbidden: ['nuage'], language: 'fr' },
    { forbidden: ['nuage'], language: 'fr' },
  ],
}
const csv = { file: 'test/fixtures/glossaries/glossary.csv' }
const wide = { file: 'test/fixtures/glossaries/glossary-wide.csv' }
const tbx = { file: 'test/fixtures/glossaries/glossary.tbx' }

new PluginTester().run(terminology, {
  valid: [
    { name: 'no glossary: nothing to check', source: 'Open the file', translation: 'Ouvrir le document' },
    { source: 'Open the file', translation: 'Datei öffnen', targetLanguage: 'de', options: inline },
    { name: 'German plural and compound', source: 'Delete files and file names', translation: 'Dateien und Dateinamen löschen', targetLanguage: 'de', options: inline },
    { name: 'Russian inflection', source: 'Move to folder', translation: 'Переместить в папку', targetLanguage: 'ru', options: inline },
    { name: 'Arabic with attached article', source: 'Open settings', translation: 'افتح الإعدادات', targetLanguage: 'ar', options: inline },
    { name: 'Greek alternatives', source: 'Your account', translation: 'Ο λογαριασμός σας', targetLanguage: 'el', options: inline },
    { name: 'Chinese substring', source: 'Save to the cloud', translation: '保存到云端', targetLanguage: 'zh-CN', options: inline },
    { name: 'term for another language', source: 'Open the file', translation: 'Ouvrir le fichier', targetLanguage: 'fr', options: inline },
    { name: 'source term only as part of a word', source: 'Open the profile', translation: 'Profil öffnen', targetLanguage: 'de', options: inline },
    { name: 'term inside a placeholder or URL', source: 'Open {file} from https://example.com/file', translation: '{file} öffnen', targetLanguage: 'de', options: inline },
    // Bracketed prose is text; only bracket placeholders are masked.
    { name: 'a target term inside brackets', source: 'Delete the file', translation: 'Die [Datei] löschen', targetLanguage: 'de', options: inline },
    { name: 'bracket placeholders are masked', source: 'Open [[file]], [file_name], [FILE] or [0]', translation: '[[file]], [file_name], [FILE] oder [0] öffnen', targetLanguage: 'de', options: inline },
    { name: 'CSV alternatives', source: 'Sign in to continue', translation: 'Connectez-vous pour continuer', targetLanguage: 'fr', options: csv },
    { name: 'CSV Japanese', source: 'Open the file', translation: 'ファイルを開く', targetLanguage: 'ja', options: csv },
    { name: 'wide CSV, Hebrew', source: 'Open the file', translation: 'פתח את הקובץ', targetLanguage: 'he', options: wide },
    { name: 'TBX, Hindi', source: 'Open settings', translation: 'सेटिंग्स खोलें', targetLanguage: 'hi', options: tbx },
    { name: 'TBX, Thai', source: 'Open settings', translation: 'เปิดการตั้งค่า', targetLanguage: 'th', options: tbx },
    { name: 'TBX entities and CDATA', source: 'Ask the R&D team', translation: 'Fragen Sie das F&E-Team', targetLanguage: 'de', options: tbx },
    { name: 'stem of seven letters drops two (образец, образца)', source: 'Sample name', translation: 'Название образца', targetLanguage: 'ru', options: more },
    { name: 'stem of four letters drops one (игра, игры)', source: 'Game settings', translation: 'Настройки игры', targetLanguage: 'ru', options: more },
    { name: 'Latin term inside Japanese text', source: 'Powered by Switchyard', translation: 'これはSwitchyardです', targetLanguage: 'ja', options: inline },
    { name: 'multi-word term', source: 'Sign in to continue', translation: 'Se connecter pour continuer', options: more },
    { name: 'the brand in lower case is a common word', source: 'the switchyard of the station', translation: 'le triage de la gare', options: inline },
    { name: 'a rule for pt-BR is not one for pt-PT', source: 'Open the file', translation: 'Abrir o ficheiro', targetLanguage: 'pt-PT', options: more },
    { name: 'a rule for pt covers pt-BR', source: 'Open the folder', translation: 'Abrir a pasta', targetLanguage: 'pt-BR', options: more },
    { name: 'a forbidden word inside the approved term', source: 'Open cloud storage', translation: 'Cloud-Speicher öffnen', targetLanguage: 'de', options: more },
    { name: 'a forbidden word inside a compound', source: 'Open iCloud Drive', translation: 'iCloud Drive öffnen', targetLanguage: 'de', options: more },
    { name: 'homonyms share their targets', source: 'Empty the trash', translation: 'Papierkorb leeren', targetLanguage: 'de', options: more },
    { name: 'a rule with a source term and no target requires nothing', source: 'Cloud storage', translation: 'Stockage en ligne', options: more },
    { name: 'an empty translation is the empty check\'s concern', source: 'Open the file', translation: '', targetLanguage: 'de', options: inline },
    // Soft hyphens, zero-width spaces and joiners inside a term do not hide it (text or glossary).
    { name: 'a soft hyphen inside the target term', source: 'Open the file manager', translation: 'Dateiverwal\u00adtung öffnen', targetLanguage: 'de', options: { terms: [{ source: 'file manager', target: 'Dateiverwaltung' }] } },
    { name: 'a zero-width space inside the target term, exact inflection', source: 'Open the file', translation: 'Da\u200btei öffnen', targetLanguage: 'de', options: { ...inline, inflection: 'exact' } },
    { name: 'a soft hyphen in the glossary\'s term', source: 'Open the file', translation: 'Datei öffnen', targetLanguage: 'de', options: { terms: [{ source: 'file', target: 'Da\u00adtei' }] } },
    { name: 'forbidden term inflected, exact inflection', source: 'Open the directory', translation: 'Ordner und Verzeichnisse öffnen', targetLanguage: 'de', options: { ...more, inflection: 'exact' } },
  ],
  invalid: [
    { name: 'a forbidden term inside brackets', source: 'Open the file', translation: 'Datei öffnen [File]', targetLanguage: 'de', options: inline, findings: [{ code: 'forbidden-term', message: '"File" is a forbidden term (use "Datei")', span: { start: 14, end: 18, in: 'translation' } }] },
    { name: 'a source term inside brackets', source: 'Click [Save to cloud]', translation: '点击 [保存到存储]', targetLanguage: 'zh-CN', options: inline, findings: [{ code: 'term-not-translated', message: 'The term "cloud" should be translated as "云"', span: { start: 15, end: 20, in: 'source' } }] },
    { source: 'Open the file', translation: 'Dokument öffnen', targetLanguage: 'de', options: inline, findings: [{ code: 'term-not-translated', span: { start: 9, end: 13, in: 'source' } }] },
    { name: 'forbidden term', source: 'Open the file', translation: 'Datei öffnen (File)', targetLanguage: 'de', options: inline, findings: [{ code: 'forbidden-term', span: { start: 14, end: 18, in: 'translation' } }] },
    { name: 'Russian wrong term', source: 'Move to folder', translation: 'Переместить в каталог', targetLanguage: 'ru', options: inline, findings: [{ code: 'term-not-translated', span: { start: 8, end: 14, in: 'source' } }] },
    { name: 'Greek', source: 'Delete account', translation: 'Διαγραφή προφίλ', targetLanguage: 'el', options: inline, findings: [{ code: 'term-not-translated', span: { start: 7, end: 14, in: 'source' } }] },
    { name: 'Chinese', source: 'Cloud storage', translation: '在线存储', targetLanguage: 'zh-CN', options: inline, findings: [{ code: 'term-not-translated', span: { start: 0, end: 5, in: 'source' } }] },
    { name: 'case-sensitive brand', source: 'Powered by Switchyard', translation: 'Propulsé par switchyard', options: inline, findings: [{ code: 'term-not-translated', span: { start: 11, end: 21, in: 'source' } }] },
    { name: 'forbidden without a source term', source: 'Storage', translation: 'Stockage dans le nuage', options: inline, findings: [{ code: 'forbidden-term', in: 'translation', message: '"nuage"' }] },
    { name: 'CSV forbidden and missing', source: 'Open the folder', translation: 'Verzeichnis öffnen', targetLanguage: 'de', options: csv, findings: [{ code: 'term-not-translated', span: { start: 9, end: 15, in: 'source' } }, { code: 'forbidden-term', span: { start: 0, end: 11, in: 'translation' } }] },
    { name: 'CSV Russian forbidden', source: 'Folder', translation: 'Директория', targetLanguage: 'ru', options: csv, findings: [{ code: 'term-not-translated', span: { start: 0, end: 6, in: 'source' } }, { code: 'forbidden-term', span: { start: 0, end: 10, in: 'translation' } }] },
    { name: 'wide CSV, Arabic', source: 'Open the file', translation: 'افتح المستند', targetLanguage: 'ar', options: wide, findings: [{ code: 'term-not-translated', span: { start: 9, end: 13, in: 'source' } }] },
    { name: 'TBX deprecated term', source: 'Open settings', translation: 'Optionen öffnen', targetLanguage: 'de', options: tbx, findings: [{ code: 'term-not-translated', span: { start: 5, end: 13, in: 'source' } }, { code: 'forbidden-term', span: { start: 0, end: 8, in: 'translation' } }] },
    { name: 'TBX Thai missing', source: 'Open settings', translation: 'เปิดตัวเลือก', targetLanguage: 'th', options: tbx, findings: [{ code: 'term-not-translated', span: { start: 5, end: 13, in: 'source' } }] },
    { name: 'exact inflection', source: 'Delete files', translation: 'Dateien löschen', targetLanguage: 'de', options: { ...inline, inflection: 'exact' }, findings: [{ code: 'term-not-translated', span: { start: 7, end: 12, in: 'source' } }] },
    { name: 'term message with alternatives', source: 'Delete account', translation: 'Διαγραφή προφίλ', targetLanguage: 'el', options: inline, findings: [{ code: 'term-not-translated', span: { start: 7, end: 14, in: 'source' }, message: 'The term "account" should be translated as "λογαριασμός" or "λογαριασμού"' }] },
    { name: 'forbidden term message with the one to use', source: 'Open the file', translation: 'Datei öffnen (File)', targetLanguage: 'de', options: inline, findings: [{ code: 'forbidden-term', span: { start: 14, end: 18, in: 'translation' }, message: '"File" is a forbidden term (use "Datei")' }] },
    { name: 'forbidden term without one to use, twice', source: 'Storage', translation: 'Nuage, toujours le nuage', options: more, findings: [{ code: 'forbidden-term', span: { start: 0, end: 5, in: 'translation' }, message: /^"Nuage" is a forbidden term$/ }, { code: 'forbidden-term', span: { start: 19, end: 24, in: 'translation' } }] },
    { name: 'prefix inflection keeps the whole word', source: 'Move to folder', translation: 'Переместить в папку', targetLanguage: 'ru', options: { ...inline, inflection: 'prefix' }, findings: [{ code: 'term-not-translated', span: { start: 8, end: 14, in: 'source' } }] },
    { name: 'a subfolder is not the folder', source: 'Move to folder', translation: 'Переместить в подпапку', targetLanguage: 'ru', options: inline, findings: [{ code: 'term-not-translated', span: { start: 8, end: 14, in: 'source' } }] },
    { name: 'source term in another case', source: 'Open the File', translation: 'Dokument öffnen', targetLanguage: 'de', options: inline, findings: [{ code: 'term-not-translated', span: { start: 9, end: 13, in: 'source' } }] },
    { name: 'source term in English plural', source: 'Delete files', translation: 'Dokumente löschen', targetLanguage: 'de', options: inline, findings: [{ code: 'term-not-translated', span: { start: 7, end: 12, in: 'source' } }] },
    { name: 'Chinese source term inside a sentence', source: '打开文件', translation: 'Ouvrir le document', sourceLanguage: 'zh-CN', options: more, findings: [{ code: 'term-not-translated', span: { start: 2, end: 4, in: 'source' } }] },
    { name: 'a rule for pt_BR', source: 'Open the file', translation: 'Abrir o ficheiro', targetLanguage: 'pt-BR', options: more, findings: [{ code: 'term-not-translated', span: { start: 9, end: 13, in: 'source' }, message: '"arquivo"' }] },
    { name: 'a rule for de-DE covers de', source: 'Open the document', translation: 'Datei öffnen', targetLanguage: 'de', options: more, findings: [{ code: 'term-not-translated', span: { start: 9, end: 17, in: 'source' } }] },
    { name: 'a forbidden word beside the approved term', source: 'Open cloud storage', translation: 'Cloud-Speicher oder Cloud oder Cloud-Speicher', targetLanguage: 'de', options: more, findings: [{ code: 'forbidden-term', span: { start: 20, end: 25, in: 'translation' } }] },
    { name: 'spans around a soft hyphen are the text\'s', source: 'Open the fi\u00adle', translation: 'Dokument öffnen (Fi\u00adle)', targetLanguage: 'de', options: inline, findings: [{ code: 'term-not-translated', span: { start: 9, end: 14, in: 'source' } }, { code: 'forbidden-term', span: { start: 17, end: 22, in: 'translation' }, message: '"File" is a forbidden term (use "Datei")' }] },
    { name: 'forbidden term inflected', source: 'Open the directory', translation: 'Ordner und Verzeichnisse öffnen', targetLanguage: 'de', options: more, findings: [{ code: 'forbidden-term', span: { start: 11, end: 24, in: 'translation' }, message: '"Verzeichnisse" is a forbidden term (use "Ordner")' }] },
  ],
})

describe('terminology glossaries', () => {
  it('parses TBX v3 langSec and conceptEntry', () => {
    const entries = parseTbx(`<tbx><text><body><conceptEntry><langSec xml:lang="en"><termSec><term>save</term></termSec></langSec>
      <langSec xml:lang="fr"><termSec><term>enregistrer</term></termSec><termSec><term>sauver</term><descrip type="administrativeStatus">deprecated</descrip></termSec></langSec></conceptEntry></body></text></tbx>`)
    expect(entries).toContainEqual({ source: 'save', sourceLanguage: 'en', language: 'fr', targets: ['enregistrer'], forbidden: ['sauver'] })
  })
  it('rejects malformed XML', () => {
    expect(() => parseXml('<a><b></a>')).toThrow(/does not close/)
    expect(() => parseXml('<a>')).toThrow(/not closed/)
  })
  it('reads quoted CSV fields with delimiters and quotes', () => {
    const entries = parseGlossaryCsv('\uFEFFTerm,Translation,Lang\n"save, now","speichern ""jetzt""",de\n')
    expect(entries).toEqual([{ source: 'save, now', targets: ['speichern "jetzt"'], forbidden: [], language: 'de', sourceLanguage: undefined }])
  })
  it('fails at load on a missing file', async () => {
    await expect(runPluginCase(terminology, { source: 'a', translation: 'b', options: { file: 'nope.csv' } })).rejects.toThrow(/cannot read the glossary/)
  })
  it('fails at load, located, on a character reference to no character XML allows (not well-formed)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'terminology-'))
    try {
      const file = path.join(dir, 'bad.tbx')
      await writeFile(file, '<martif><text><body><termEntry><langSet xml:lang="en"><tig><term>a&#99999999;</term></tig></langSet></termEntry></body></text></martif>')
      await expect(runPluginCase(terminology, { source: 'a', translation: 'b', options: { file } })).rejects.toThrow(`terminology: cannot parse the glossary ${file}: XML: &#99999999; is not a character XML allows (offset 66)`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('terminology glossary parsers', () => {
  it('reads every column of a long CSV: CRLF, blank rows, pipes, semicolons, spaces', () => {
    const text = ' Source Term ;Translation;Target Language;Source Language; Forbidden ;Case Sensitive;term\r\n'
      + ' file ; Datei | Akte ;de; en ;Ordner|  ;yes;x\r\n'
      + '\r\n'
      + ';;de;;Verzeichnis;no;\r\n'
      + 'Switchyard;Switchyard;;;;1;\n'
      + ';;;;;;\n'
      + 'cloud;Wolke;de;;;'
    expect(parseGlossaryCsv(text)).toEqual([
      { source: 'file', targets: ['Datei', 'Akte'], forbidden: ['Ordner'], language: 'de', sourceLanguage: 'en', caseSensitive: true },
      { source: undefined, targets: [], forbidden: ['Verzeichnis'], language: 'de', sourceLanguage: undefined, caseSensitive: false },
      { source: 'Switchyard', targets: ['Switchyard'], forbidden: [], language: undefined, sourceLanguage: undefined, caseSensitive: true },
      { source: 'cloud', targets: ['Wolke'], forbidden: [], language: 'de', sourceLanguage: undefined, caseSensitive: false },
    ])
  })
  it('finds columns in any order, the first one of a name winning', () => {
    expect(parseGlossaryCsv('target,source\nDatei,file')).toEqual([{ source: 'file', targets: ['Datei'], forbidden: [], language: undefined, sourceLanguage: undefined }])
    expect(parseGlossaryCsv('language,source,target,language\nde,file,Datei,fr')).toEqual([{ source: 'file', targets: ['Datei'], forbidden: [], language: 'de', sourceLanguage: undefined }])
    expect(parseGlossaryCsv('forbidden,source,target\nVerzeichnis,folder,Ordner')).toEqual([{ source: 'folder', targets: ['Ordner'], forbidden: ['Verzeichnis'], language: undefined, sourceLanguage: undefined }])
    expect(parseGlossaryCsv('source language,source,target\nen,file,Datei')).toEqual([{ source: 'file', targets: ['Datei'], forbidden: [], language: undefined, sourceLanguage: 'en' }])
    expect(() => parseGlossaryCsv('target,language\nDatei,de')).toThrow('glossary CSV: a "target" column needs a "source" column')
    expect(parseGlossaryCsv('')).toEqual([])
  })
  it('takes the delimiter from the header line only', () => {
    expect(parseGlossaryCsv('source;target\nfile;Datei,Akte,Dokument,Mappe')).toEqual([{ source: 'file', targets: ['Datei,Akte,Dokument,Mappe'], forbidden: [], language: undefined, sourceLanguage: undefined }])
  })
  it('reads a wide CSV: a column per language, the first one the source', () => {
    expect(parseGlossaryCsv('Term, de ,fr\n file ,Datei|Akte,\n,Ordner,dossier\nfolder,,dossier\n')).toEqual([
      { source: 'file', sourceLanguage: undefined, language: 'de', targets: ['Datei', 'Akte'], forbidden: [] },
      { source: 'folder', sourceLanguage: undefined, language: 'fr', targets: ['dossier'], forbidden: [] },
    ])
    expect(parseGlossaryCsv('en,de\nfile,Datei')).toEqual([{ source: 'file', sourceLanguage: 'en', language: 'de', targets: ['Datei'], forbidden: [] }])
  })
  it('decodes XML entities and character references, leaving unknown ones', () => {
    expect(decodeXmlEntities('&#x4E2D;&#20013;&#65;&amp;&lt;&gt;&quot;&apos;&nbsp;')).toBe('中中A&<>"\'&nbsp;')
  })
  it('parses XML with namespaces, CDATA, comments, attributes and text', () => {
    const doc = parseXml('<?xml version="1.0"?><!-- c --><tbx:a x=\'1 &amp; 2\'><b/>  one <![CDATA[<two>]]>\n <c>three</c></tbx:a>')
    const a = doc.children[0] as { name: string; attrs: Record<string, string> }
    expect(doc.name).toBe('#document')
    expect(a.name).toBe('a')
    expect(a.attrs).toEqual({ x: '1 & 2' })
    expect(findAll(doc, 'b')).toHaveLength(1)
    expect(textOf(doc)).toBe('one <two> three')
    expect(() => parseXml('<a>1 < 2</a>')).toThrow('XML: stray "<" at offset 5')
    expect(() => parseXml('<a><b></a>')).toThrow('XML: </a> does not close <b> (offset 6)')
    expect(() => parseXml('<a><b>')).toThrow('XML: <b> is not closed')
    // Character references to no character XML allows (XML 1.0's Char): not well-formed, located
    // in text and in attribute values, as a real XML reader rejects them.
    expect(() => parseXml('<a>x&#xD800;</a>')).toThrow('XML: &#xD800; is not a character XML allows (offset 4)')
    expect(() => parseXml('<a b="1" c=\'&#x110000;\'/>')).toThrow('XML: &#x110000; is not a character XML allows (offset 12)')
    expect(() => parseXml('<a>&#0;</a>')).toThrow('XML: &#0; is not a character XML allows (offset 3)')
    expect(() => parseXml('<a>&#xFFFE;</a>')).toThrow(/&#xFFFE; is not a character/)
    expect(() => parseXml('<a>&#99999999999999999999;</a>')).toThrow(/&#99999999999999999999; is not a character/)
    expect(textOf(parseXml('<a>&#9;&#x10FFFF;&#xE000;&#xD7FF;&#x1F600;</a>'))).toBe('\u{10FFFF}\uE000\uD7FF\u{1F600}')
  })
})

describe('terminology TBX', () => {
  it('reads TBX v2: tig and ntig, a language given twice, deprecated terms, sections without a language or terms', () => {
    const entries = parseTbx(`<martif><text><body>
      <termEntry>
        <langSet xml:lang="en"><tig><term>folder</term></tig></langSet>
        <langSet xml:lang="de"><ntig><termGrp><term>Ordner</term></termGrp></ntig>
          <tig><term>Verzeichnis</term><termNote type="administrativeStatus">deprecatedTerm-admn-sts</termNote></tig></langSet>
        <langSet xml:lang="de"><tig><term>Mappe</term></tig></langSet>
        <langSet><tig><term>ignored</term></tig></langSet>
        <langSet xml:lang="fr"><tig><term> </term></tig></langSet>
      </termEntry>
      <termEntry><langSet lang="en"><term>file</term></langSet><langSet lang="ja"><term>ファイル</term></langSet></termEntry>
    </body></text></martif>`)
    expect(entries).toEqual([
      { source: 'folder', sourceLanguage: 'en', language: 'de', targets: ['Ordner', 'Mappe'], forbidden: ['Verzeichnis'] },
      { source: 'Ordner', sourceLanguage: 'de', language: 'en', targets: ['folder'], forbidden: [] },
      { source: 'Mappe', sourceLanguage: 'de', language: 'en', targets: ['folder'], forbidden: [] },
      { source: 'file', sourceLanguage: 'en', language: 'ja', targets: ['ファイル'], forbidden: [] },
      { source: 'ファイル', sourceLanguage: 'ja', language: 'en', targets: ['file'], forbidden: [] },
    ])
  })
})
