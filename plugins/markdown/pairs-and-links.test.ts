// The markdown check's exact findings: emphasis, strong and strikethrough pairs counted by
// strength (a warning, singular and plural worded), unbalanced markers (an error), reference and
// inline links, images and inline code, each with the side its span is on; and each part of the
// check switched off by its option.
import { PluginTester } from '../../src/engine/plugin-tester.js'
import markdown from './index.js'

new PluginTester().run(markdown, {
  valid: [
    { name: 'an unbalanced source is not judged', source: 'A **b', translation: 'A **b**' },
    { name: 'strikethrough pairs kept', source: 'Price ~~$10~~ $5', translation: 'Prix ~~10 $~~ 5 $' },
    { name: 'code is not checked when told not to', source: 'Run `a`', translation: 'Lancez `b`', options: { checkCode: false } },
    { name: 'links are not checked when told not to', source: 'See [docs](/d)', translation: 'Voir [doc](/x)', options: { checkLinks: false } },
    { name: 'emphasis is not checked when told not to', source: 'A **b**', translation: 'A **b', options: { checkEmphasis: false } },
    { name: 'an unpaired strikethrough in the source is not judged', source: 'A ~~b and **c**', translation: 'A b and **c**' },
  ],
  invalid: [
    { name: 'one strikethrough pair dropped', source: 'Price ~~$10~~ $5', translation: 'Harga $10 $5', targetLanguage: 'id', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 1 strikethrough pair, the translation 0' }] },
    { name: 'two strikethrough pairs, one kept', source: 'Price ~~$10~~ $5 ~~old~~', translation: 'Harga ~~$10~~ $5 old', targetLanguage: 'id', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 2 strikethrough pairs, the translation 1' }] },
    { name: 'one strong pair dropped', source: 'A **b**', translation: 'A b', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 1 strong pair, the translation 0' }] },
    { name: 'two strong pairs, one kept', source: 'A **b** and **c**', translation: 'A **b** und c', targetLanguage: 'de', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 2 strong pairs, the translation 1' }] },
    { name: 'three emphasis pairs, one kept', source: 'A *b* and *c* and *d*', translation: 'A *b* und c und d', targetLanguage: 'de', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 3 emphasis pairs, the translation 1' }] },
    { name: 'strong emphasis dropped', source: 'A ***b***', translation: 'A b', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 1 strong emphasis pair, the translation 0' }] },
    { name: 'strong marker unbalanced', source: 'A **b**', translation: 'A **b', findings: [{ code: 'unbalanced-emphasis', severity: 'error', message: 'Unbalanced strong markers (**): the translation has 1, the source 2' }] },
    { name: 'strikethrough marker unbalanced', source: 'A ~~b~~', translation: 'A ~~b', findings: [{ code: 'unbalanced-emphasis', severity: 'error', message: 'Unbalanced strikethrough markers (~~): the translation has 1, the source 2' }] },
    { name: 'once markers are unbalanced, pairs are not counted', source: 'A **b** and *c*', translation: 'A **b and c', findings: [{ code: 'unbalanced-emphasis', severity: 'error', message: 'Unbalanced strong markers (**): the translation has 1, the source 2' }] },
    { name: 'nor strikethrough pairs', source: 'A **b** and ~~c~~', translation: 'A **b and c', findings: [{ code: 'unbalanced-emphasis', severity: 'error', message: 'Unbalanced strong markers (**): the translation has 1, the source 2' }] },
    { name: 'an unpaired emphasis marker in the source leaves the strong pairs counted', source: 'A *b and **c**', translation: 'A b and c', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 1 strong pair, the translation 0' }] },
    { name: 'an emphasis marker added', source: 'A **b** *c*', translation: 'A **b** *c* *d', findings: [{ code: 'unbalanced-emphasis', severity: 'error', message: 'Unbalanced emphasis markers (*): the translation has 3, the source 2' }] },
    { name: 'an empty translation drops the pairs', source: 'A *b*', translation: '', findings: [{ code: 'emphasis-count', severity: 'warning', message: 'The source has 1 emphasis pair, the translation 0' }] },
    { name: 'a bracketed pair is a broken reference only when the source has reference links', source: 'See [docs](/d)', translation: 'Siehe [Doku] [ref]', targetLanguage: 'de', findings: [{ code: 'missing-link', message: 'Link (/d) is missing from the translation, or its URL or `](` syntax changed', span: { start: 9, end: 14, in: 'source' } }] },
    { name: 'a space breaks a reference link', source: 'See [docs][ref]', translation: 'Siehe [Doku] [ref]', targetLanguage: 'de', findings: [{ code: 'broken-link', message: 'Broken Markdown link: no space may stand between "]" and its label [ref]', span: { start: 11, end: 18, in: 'translation' } }] },
    { name: 'a reference link dropped', source: 'See [docs][ref]', translation: 'Siehe Doku', targetLanguage: 'de', findings: [{ code: 'missing-reference-link', message: 'Reference link [ref] is missing from the translation, or its label or `][` syntax changed', span: { start: 9, end: 15, in: 'source' } }] },
    { name: 'a space breaks an inline link', source: 'See [docs](/d)', translation: 'Siehe [Doku] (/d)', targetLanguage: 'de', findings: [{ code: 'broken-link', message: 'Broken Markdown link: no space may stand between "]" and "(" (/d)', span: { start: 11, end: 17, in: 'translation' } }] },
    { name: 'an image dropped', source: 'See ![logo](/l.png)', translation: 'Siehe Logo', targetLanguage: 'de', findings: [{ code: 'missing-link', message: 'Image (/l.png) is missing from the translation, or its URL or `](` syntax changed', span: { start: 10, end: 19, in: 'source' } }] },
    {
      name: 'a link URL changed',
      source: 'See [docs](/d)',
      translation: 'Siehe [Doku](/x)',
      targetLanguage: 'de',
      findings: [
        { code: 'missing-link', message: 'Link (/d) is missing from the translation, or its URL or `](` syntax changed', span: { start: 9, end: 14, in: 'source' } },
        { code: 'extra-link', message: 'Link URL (/x) is not in the source', span: { start: 11, end: 16, in: 'translation' } },
      ],
    },
    {
      name: 'inline code changed',
      source: 'Run `a`',
      translation: 'Lauf `b`',
      targetLanguage: 'de',
      findings: [
        { code: 'missing-code', severity: 'error', message: 'Inline code `a` is missing or changed: code stays as in the source', span: { start: 4, end: 7, in: 'source' } },
        { code: 'extra-code', severity: 'error', message: 'Inline code `b` is not in the source', span: { start: 5, end: 8, in: 'translation' } },
      ],
    },
  ],
})
