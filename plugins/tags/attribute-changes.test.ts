// The tags check's exact findings when the same element comes back with other attributes: which
// attributes changed, for each of several elements of the same name in turn; an attribute only
// named (`disabled`) is not the same as one with a value; language attributes change freely; and
// whole tags missing or added, with the side of each span.
import { PluginTester } from '../../src/engine/plugin-tester.js'
import tags from './index.js'

new PluginTester().run(tags, {
  valid: [
    { name: 'lang changes with the language', source: '<p lang="en">a</p>', translation: '<p lang="fr">a</p>' },
    { name: 'a void tag written either way', source: '<br/> a', translation: '<br> a' },
  ],
  invalid: [
    {
      name: 'two links of the same element, each changed in its own attribute',
      source: '<a href="x" class="c">a</a> <a href="y" class="d">b</a>',
      translation: '<a href="x" class="e">a</a> <a href="z" class="d">b</a>',
      findings: [
        { code: 'changed-attributes', message: 'Attributes of <a href="x" class="c"> changed in the translation (class): <a href="x" class="e">', span: { start: 0, end: 22, in: 'translation' } },
        { code: 'changed-attributes', message: 'Attributes of <a href="y" class="d"> changed in the translation (href): <a href="z" class="d">', span: { start: 28, end: 50, in: 'translation' } },
      ],
    },
    {
      name: 'two links changed, paired in order',
      source: '<a href="x">a</a> <a href="y">b</a>',
      translation: '<a href="z">a</a> <a href="w">b</a>',
      findings: [
        { code: 'changed-attributes', message: 'Attributes of <a href="x"> changed in the translation (href): <a href="z">', span: { start: 0, end: 12, in: 'translation' } },
        { code: 'changed-attributes', message: 'Attributes of <a href="y"> changed in the translation (href): <a href="w">', span: { start: 18, end: 30, in: 'translation' } },
      ],
    },
    { name: 'alt is translated, src is not', source: '<img alt="Cat" src="c.png">', translation: '<img alt="Chat" src="d.png">', findings: [{ code: 'changed-attributes', message: 'Attributes of <img alt="Cat" src="c.png"> changed in the translation (src): <img alt="Chat" src="d.png">', span: { start: 0, end: 28, in: 'translation' } }] },
    { name: 'a translatable attribute dropped', source: '<img alt="Cat" src="c.png">', translation: '<img src="c.png">', findings: [{ code: 'changed-attributes', message: 'Attributes of <img alt="Cat" src="c.png"> changed in the translation (alt): <img src="c.png">', span: { start: 0, end: 17, in: 'translation' } }] },
    { name: 'a named attribute given a value', source: '<input disabled>', translation: '<input disabled="disabled">', findings: [{ code: 'changed-attributes', message: 'Attributes of <input disabled> changed in the translation (disabled): <input disabled="disabled">', span: { start: 0, end: 27, in: 'translation' } }] },
    {
      name: 'one element for another',
      source: '<b>a</b>',
      translation: '<i>a</i>',
      findings: [
        { code: 'missing-tag', message: 'Missing tag <b>', span: { start: 0, end: 3, in: 'source' } },
        { code: 'missing-tag', message: 'Missing tag </b>', span: { start: 4, end: 8, in: 'source' } },
        { code: 'extra-tag', message: 'Tag <i> is not in the source', span: { start: 0, end: 3, in: 'translation' } },
        { code: 'extra-tag', message: 'Tag </i> is not in the source', span: { start: 4, end: 8, in: 'translation' } },
      ],
    },
    {
      name: 'a closing tag written as an opening one',
      source: '<b>a</b>',
      translation: '<b>a<b>',
      findings: [
        { code: 'unclosed-tag', message: 'Tag <b> is not closed', span: { start: 0, end: 3, in: 'translation' } },
        { code: 'unclosed-tag', message: 'Tag <b> is not closed', span: { start: 4, end: 7, in: 'translation' } },
        { code: 'missing-tag', message: 'Missing tag </b>', span: { start: 4, end: 8, in: 'source' } },
        { code: 'extra-tag', message: 'Tag <b> is not in the source', span: { start: 4, end: 7, in: 'translation' } },
      ],
    },
  ],
})
