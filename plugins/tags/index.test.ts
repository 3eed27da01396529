import { PluginTester } from '../../src/engine/plugin-tester.js'
import tags from './index.js'

new PluginTester().run(tags, {
  valid: [
    // Character references in attribute values: the same character however written (HTML and XML).
    { name: 'an ampersand written as a named or numeric reference', source: '<a href="/s?a=1&amp;b=2">search</a>', translation: '<a href="/s?a=1&#38;b=2">Suche</a>', targetLanguage: 'de' },
    { name: 'a hexadecimal reference', source: '<a title="x" href="/a&#x2F;b">x</a>', translation: '<a title="y" href="/a&#47;b">y</a>' },
    // `markup: html`: tag and attribute names as HTML reads them, without case.
    { name: 'HTML tag names without case', source: 'Click <B>here</B>', translation: 'Cliquez <b>ici</b>', options: { markup: 'html' } },
    { name: 'HTML attribute names without case', source: '<A HREF="/terms">terms</A>', translation: '<a href="/terms">conditions</a>', options: { markup: 'html' } },
    { name: 'HTML nesting without case', source: '<b>here</b>', translation: '<B>ici</b>', options: { markup: 'html' } },
    { source: 'Click <b>here</b> to <i>continue</i>', translation: 'Pour <i>continuer</i>, cliquez <b>ici</b>' },
    { source: 'Line one<br>Line two', translation: '第一行<br/>第二行', targetLanguage: 'zh-CN' },
    { name: '"a < b" is not a tag', source: 'Use a < b and c > d', translation: 'Используйте a < b и c > d', targetLanguage: 'ru' },
    { name: 'title and alt may be translated', source: '<img src="logo.png" alt="Logo"> <abbr title="World Wide Web">WWW</abbr>', translation: '<img src="logo.png" alt="شعار"> <abbr title="الشبكة العالمية">WWW</abbr>', targetLanguage: 'ar' },
    { source: 'Read the <a href="/terms" class="link">terms</a>.', translation: 'קראו את <a class="link" href="/terms">התנאים</a>.', targetLanguage: 'he' },
    { name: 'react-i18next numbered tags', source: 'Hello <0>{{name}}</0>, <1/>', translation: 'नमस्ते <0>{{name}}</0>, <1/>', targetLanguage: 'hi' },
    { name: 'fragment: source itself unbalanced', source: '<b>Warning', translation: '<b>Προειδοποίηση', targetLanguage: 'el' },
    { source: 'Press <kbd>Ctrl</kbd>+<kbd>S</kbd>', translation: 'กด <kbd>Ctrl</kbd>+<kbd>S</kbd>', targetLanguage: 'th' },
    { name: 'XML namespaces', source: 'Hello <xliff:g id="name">%s</xliff:g>', translation: 'Hallo <xliff:g id="name">%s</xliff:g>', targetLanguage: 'de' },
    { name: 'lang and dir follow the target language', source: '<p lang="en" dir="ltr">Hello</p>', translation: '<p lang="ar" dir="rtl">مرحبا</p>', targetLanguage: 'ar' },
    { name: 'xml:lang follows the target language', source: '<span xml:lang="en-US">Save</span>', translation: '<span xml:lang="de-DE">Speichern</span>', targetLanguage: 'de' },
    { name: 'lang in Hebrew', source: 'Read <q lang="en">this</q>', translation: 'קראו <q lang="he" dir="rtl">זאת</q>', targetLanguage: 'he' },
    { name: 'lang dropped', source: '<span lang="en">OK</span>', translation: '<span>ОК</span>', targetLanguage: 'ru' },
    { name: 'placeholder, aria-label and label translated', source: '<input placeholder="Search" aria-label="Search box"><option label="Red">', translation: '<input placeholder="Поиск" aria-label="Поле поиска"><option label="Красный">', targetLanguage: 'ru' },
    { name: 'title and alt in Japanese', source: '<img src="a.png" alt="Cat" title="A cat">', translation: '<img src="a.png" alt="猫" title="一匹の猫">', targetLanguage: 'ja' },
    { name: 'comments are not tags', source: 'Save<!-- verb -->', translation: 'Enregistrer' },
  ],
  invalid: [
    { name: 'XML (default) tag names keep their case', source: 'Click <B>here</B>', translation: 'Cliquez <b>ici</b>', findings: [{ code: 'missing-tag', message: 'Missing tag <B>', in: 'source' }, { code: 'missing-tag', message: 'Missing tag </B>', in: 'source' }, { code: 'extra-tag', message: 'Tag <b> is not in the source', in: 'translation' }, { code: 'extra-tag', message: 'Tag </b> is not in the source', in: 'translation' }] },
    { name: 'HTML attribute values keep their case', source: '<a href="/Terms">terms</a>', translation: '<A HREF="/terms">conditions</A>', options: { markup: 'html' }, findings: [{ code: 'changed-attributes', message: 'Attributes of <a href="/Terms"> changed in the translation (href): <A HREF="/terms">', in: 'translation' }] },
    { name: 'a reference to another character', source: '<a href="/s?a=1&amp;b=2">search</a>', translation: '<a href="/s?a=1&#39;b=2">Suche</a>', targetLanguage: 'de', findings: [{ code: 'changed-attributes', message: '(href)', in: 'translation' }] },
    { source: 'Click <b>here</b>', translation: 'Cliquez <b>ici', findings: [{ code: 'unclosed-tag', in: 'translation', message: 'Tag <b> is not closed' }, { code: 'missing-tag', in: 'source', message: 'Missing tag </b>' }] },
    { source: '<b>Bold <i>and italic</i></b>', translation: '<b>粗体<i>和斜体</b></i>', targetLanguage: 'zh-CN', findings: [{ code: 'crossed-tags', in: 'translation', message: 'Tag <i> is not closed before </b>' }, { code: 'unopened-tag', in: 'translation', message: 'Closing tag </i> has no opening tag' }] },
    { source: 'Read the <a href="/terms">terms</a>', translation: 'Lesen Sie die <a href="/de/terms">Bedingungen</a>', targetLanguage: 'de', findings: [{ code: 'changed-attributes', in: 'translation', message: 'Attributes of <a href="/terms"> changed in the translation (href)' }] },
    { source: 'Line one<br>Line two', translation: 'Строка одна Строка две', targetLanguage: 'ru', findings: [{ code: 'missing-tag', in: 'source', message: 'Missing tag <br>' }] },
    { source: 'Hello <0>{{name}}</0>', translation: 'नमस्ते <0>{{name}}</1>', targetLanguage: 'hi', findings: [{ code: 'unclosed-tag', span: { start: 7, end: 10, in: 'translation' } }, { code: 'unopened-tag', span: { start: 18, end: 22, in: 'translation' } }, { code: 'missing-tag', span: { start: 17, end: 21, in: 'source' } }, { code: 'extra-tag', span: { start: 18, end: 22, in: 'translation' } }] },
    { source: 'Text', translation: 'نص <script>alert(1)</script>', targetLanguage: 'ar', findings: [{ code: 'extra-tag', in: 'translation', message: 'Tag <script> is not in the source' }, { code: 'extra-tag', in: 'translation', message: 'Tag </script> is not in the source' }] },
    { source: '<span class="price">10</span>', translation: '<span class="prix">10</span>', findings: [{ code: 'changed-attributes', in: 'translation', message: 'class' }] },
    { source: 'Press <kbd>Ctrl</kbd>', translation: 'กด <kdb>Ctrl</kdb>', targetLanguage: 'th', findings: [{ code: 'missing-tag', span: { start: 6, end: 11, in: 'source' } }, { code: 'missing-tag', span: { start: 15, end: 21, in: 'source' } }, { code: 'extra-tag', span: { start: 3, end: 8, in: 'translation' } }, { code: 'extra-tag', span: { start: 12, end: 18, in: 'translation' } }] },
    { name: 'src changed', source: '<img src="en/logo.png" alt="Logo">', translation: '<img src="ja/logo.png" alt="ロゴ">', targetLanguage: 'ja', findings: [{ code: 'changed-attributes', in: 'translation', message: '(src)' }] },
    { name: 'id changed next to a changed lang', source: '<p id="intro" lang="en">Hi</p>', translation: '<p id="einleitung" lang="de">Hallo</p>', targetLanguage: 'de', findings: [{ code: 'changed-attributes', in: 'translation', message: '(id)' }] },
    { name: 'href changed next to a translated title', source: '<a href="/help" title="Help">?</a>', translation: '<a href="/aide" title="Aide">?</a>', findings: [{ code: 'changed-attributes', in: 'translation', message: '(href)' }] },
    { source: '<strong>Note:</strong> saved', translation: '<strong>Σημείωση:</strong> <strong>αποθηκεύτηκε', targetLanguage: 'el', findings: [{ code: 'unclosed-tag', in: 'translation', message: 'not closed' }, { code: 'extra-tag', in: 'translation', message: 'Tag <strong> is not in the source' }] },
  ],
})
