import { PluginTester } from '../../src/engine/plugin-tester.js'
import markdown from './index.js'

new PluginTester().run(markdown, {
  valid: [
    // Plain text: the check does not engage.
    { name: 'plain text', source: 'Save the file', translation: 'Enregistrer le fichier' },
    { name: 'a lone asterisk is a footnote mark, not Markdown', source: 'Price* may vary', translation: 'Der Preis* kann variieren', targetLanguage: 'de' },
    { name: 'snake_case and multiplication', source: 'Set max_size to 5 * 3', translation: 'Задайте max_size равным 5 * 3', targetLanguage: 'ru' },
    { name: 'brackets in prose', source: 'Files [beta] (new)', translation: 'ファイル [ベータ] (新規)', targetLanguage: 'ja' },
    { name: 'list bullet', source: '* First item', translation: '* Premier élément' },
    { name: 'placeholder with underscores', source: 'Hello {user_name}, see _this_', translation: 'Xin chào {user_name}, xem _cái này_', targetLanguage: 'vi' },
    // Markdown kept.
    { source: 'Read the [guide](https://example.com/guide).', translation: 'Lisez le [guide](https://example.com/guide).' },
    { source: 'Read the [guide](https://example.com/guide).', translation: '[ガイド](https://example.com/guide)をお読みください。', targetLanguage: 'ja' },
    { source: 'Read the [guide](/docs/guide "Guide").', translation: 'Прочитайте [руководство](/docs/guide "Руководство").', targetLanguage: 'ru' },
    { name: 'image alt translated', source: '![Logo](img/logo.png) Welcome', translation: '![شعار](img/logo.png) مرحبا', targetLanguage: 'ar' },
    { name: 'two links reordered', source: 'See [terms](/terms) and [privacy](/privacy)', translation: 'Siehe [Datenschutz](/privacy) und [AGB](/terms)', targetLanguage: 'de' },
    { source: 'Run `npm install` first', translation: 'Najpierw uruchom `npm install`', targetLanguage: 'pl' },
    { name: 'double backticks', source: 'Type ``a`b`` here', translation: 'Tapez ``a`b`` ici' },
    { source: 'This is **important**', translation: 'Dies ist **wichtig**', targetLanguage: 'de' },
    { name: 'strong in Japanese, no spaces', source: 'This is **important** now', translation: 'これは**重要**です', targetLanguage: 'ja' },
    { name: '** for __', source: 'This is __important__', translation: 'C’est **important**' },
    { source: 'An *emphasized* word', translation: 'Một từ *được nhấn mạnh*', targetLanguage: 'vi' },
    { source: 'Price ~~$10~~ $5', translation: 'Harga ~~$10~~ $5', targetLanguage: 'id' },
    { name: 'emphasis moved', source: '*Click* here', translation: 'Cliquez *ici*' },
    { name: 'reference link kept', source: 'See the [docs][ref] now', translation: 'Siehe die [Dokumentation][ref] jetzt', targetLanguage: 'de' },
    { name: 'brackets in prose next to each other are not a reference link', source: 'Options [beta] [new]', translation: 'Options [bêta] [nouveau]' },
    { name: 'code with underscores and stars', source: 'Use `a_b*c` or **bold**', translation: 'Użyj `a_b*c` lub **pogrubienia**', targetLanguage: 'pl' },
    // Backslash escapes (CommonMark 2.4): an escaped character is literal, never syntax.
    { name: 'an escaped asterisk is a literal asterisk', source: '**Bold** text', translation: '**Gras** texte avec \\* astérisque' },
    { name: 'an escaped underscore is a literal underscore', source: '*Note:* the file_name', translation: '*Remarque :* le fichier\\_nom' },
    { name: 'escaped backticks are not a code span', source: 'Use \\`quotes\\` and **bold**', translation: 'Utilisez \\`guillemets\\` et **gras**' },
    { name: 'escaped brackets are not a link', source: 'Type \\[name\\](value) and **bold**', translation: 'Tapez \\[nom\\](valeur) et **gras**' },
    // A reference label matches without regard to case or spacing (CommonMark 4.7).
    { name: 'a reference label in other case', source: 'See the [docs][docs] now', translation: 'Voir la [documentation][Docs] maintenant' },
    { name: 'a URL with balanced parentheses kept', source: 'See [Unicode](https://en.wikipedia.org/wiki/Unicode_(disambiguation))', translation: 'Voir [Unicode](https://en.wikipedia.org/wiki/Unicode_(disambiguation))' },
  ],
  invalid: [
    { name: 'space between ] and (', source: 'Read the [guide](https://example.com/guide).', translation: 'Lisez le [guide] (https://example.com/guide).', findings: [{ code: 'broken-link', in: 'translation', message: 'Broken Markdown link' }] },
    { name: 'full-width space in Japanese', source: 'See [help](/help)', translation: '[ヘルプ]\u3000(/help)を参照', targetLanguage: 'ja', findings: [{ code: 'broken-link', in: 'translation', message: 'Broken Markdown link' }] },
    { name: 'lost ](', source: 'Read the [guide](https://example.com/guide).', translation: 'Lesen Sie den Leitfaden https://example.com/guide.', targetLanguage: 'de', findings: [{ code: 'missing-link', in: 'source', message: 'Link (https://example.com/guide) is missing' }] },
    { name: 'link URL changed', source: 'See [terms](/en/terms)', translation: 'Voir [conditions](/fr/terms)', findings: [{ code: 'missing-link', in: 'source', message: 'Link (/en/terms) is missing' }, { code: 'extra-link', in: 'translation', message: 'Link URL (/fr/terms) is not in the source' }] },
    { name: 'link URL translated in Russian', source: 'See [help](/help)', translation: 'См. [справку](/справка)', targetLanguage: 'ru', findings: [{ code: 'missing-link', in: 'source' }, { code: 'extra-link', in: 'translation' }] },
    { name: 'image source lost', source: '![Logo](img/logo.png) Welcome', translation: 'مرحبا', targetLanguage: 'ar', findings: [{ code: 'missing-link', in: 'source', message: 'Image (img/logo.png)' }] },
    { name: 'code translated', source: 'Run `npm install` first', translation: 'Uruchom najpierw `npm zainstaluj`', targetLanguage: 'pl', findings: [{ code: 'missing-code', in: 'source', message: 'Inline code `npm install` is missing' }, { code: 'extra-code', in: 'translation', message: 'Inline code `npm zainstaluj` is not in the source' }] },
    { name: 'code lost its backticks', source: 'Press `Enter`', translation: 'Drücken Sie Enter', targetLanguage: 'de', findings: [{ code: 'missing-code', in: 'source', message: '`Enter`' }] },
    { name: 'code changed in Vietnamese', source: 'Use `--force`', translation: 'Dùng `—force`', targetLanguage: 'vi', findings: [{ code: 'missing-code', in: 'source' }, { code: 'extra-code', in: 'translation' }] },
    { name: 'reference link label translated', source: 'See the [docs][docs]', translation: 'См. [документацию][документы]', targetLanguage: 'ru', findings: [{ code: 'missing-reference-link', in: 'source', message: 'Reference link [docs] is missing' }, { code: 'extra-link', in: 'translation', message: 'not in the source' }] },
    { name: 'reference link broken by a space', source: 'See the [docs][ref]', translation: 'Voir la [documentation] [ref]', findings: [{ code: 'broken-link', in: 'translation', message: 'Broken Markdown link' }] },
    { name: 'reference link lost in Japanese', source: 'See the [docs][ref]', translation: 'ドキュメントを参照', targetLanguage: 'ja', findings: [{ code: 'missing-reference-link', in: 'source', message: 'Reference link [ref]' }] },
    { name: 'strong unbalanced', source: 'This is **important**', translation: 'Dies ist **wichtig', targetLanguage: 'de', findings: [{ code: 'unbalanced-emphasis', message: 'Unbalanced strong markers (**)' }] },
    { name: 'emphasis unbalanced in French', source: 'An *emphasized* word', translation: 'Un mot *souligné', findings: [{ code: 'unbalanced-emphasis', message: 'Unbalanced emphasis markers (*)' }] },
    { name: 'strong unbalanced in Indonesian', source: '**Note:** saved', translation: '**Catatan: tersimpan', targetLanguage: 'id', findings: [{ code: 'unbalanced-emphasis', message: 'Unbalanced' }] },
    { name: 'strikethrough unbalanced', source: 'Price ~~$10~~ $5', translation: 'Цена ~~$10 $5', targetLanguage: 'ru', findings: [{ code: 'unbalanced-emphasis', message: 'strikethrough' }] },
    { name: 'strong dropped is a warning', source: 'This is **important**', translation: 'C’est important', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 1 strong pair, the translation 0' }] },
    { name: 'emphasis dropped in Japanese is a warning', source: 'An *emphasized* word', translation: '強調された単語', targetLanguage: 'ja', findings: [{ code: 'emphasis-count', severity: 'warning' }] },
    // A link destination may hold balanced or escaped parentheses (CommonMark 6.3).
    {
      name: 'a URL with balanced parentheses changed',
      source: 'See [Unicode](https://en.wikipedia.org/wiki/Unicode_(disambiguation))',
      translation: 'Voir [Unicode](https://en.wikipedia.org/wiki/Unicode_(autre))',
      findings: [{ code: 'missing-link', in: 'source', message: 'Link (https://en.wikipedia.org/wiki/Unicode_(disambiguation)) is missing' }, { code: 'extra-link', in: 'translation', message: 'Link URL (https://en.wikipedia.org/wiki/Unicode_(autre)) is not in the source' }],
    },
    { name: 'a URL with escaped parentheses changed', source: 'See [docs](/docs/\\(v2\\))', translation: 'Voir [doc](/docs/\\(v3\\))', findings: [{ code: 'missing-link', in: 'source', message: 'Link (/docs/\\(v2\\))' }, { code: 'extra-link', in: 'translation', message: '(/docs/\\(v3\\))' }] },
    { name: 'an image turned into a link', source: '![Logo](img/logo.png) Welcome', translation: '[Logo](img/logo.png) Bienvenue', findings: [{ code: 'missing-link', in: 'source', message: 'Image (img/logo.png) is missing' }, { code: 'extra-link', in: 'translation', message: 'Link URL (img/logo.png)' }] },
  ],
})
