// The urls check's exact findings: e-mail addresses only when `emails` is on; a localized URL
// accepted only for a locale part (path, subdomain, query value) and never for an e-mail address
// or a word that merely names a language; several URLs dropped, changed or added, each with the
// side of its span; a changed URL paired with a changed URL and an address with an address.
import { PluginTester } from '../../src/engine/plugin-tester.js'
import urls from './index.js'

new PluginTester().run(urls, {
  valid: [
    { name: 'addresses are not checked with emails off', source: 'Write to a@example.com', translation: 'Schreib an b@example.com', targetLanguage: 'de', options: { emails: false } },
    { name: 'only URLs with emails off', source: 'Write to a@example.com or https://x.example/', translation: 'Schreib an b@example.com oder https://x.example/', targetLanguage: 'de', options: { emails: false } },
    { name: 'a localized path with region', source: 'See https://example.com/en-US/docs', translation: 'Siehe https://example.com/de_DE/docs', targetLanguage: 'de', options: { allowLocalizedUrls: true } },
    { name: 'a localized last path part', source: 'See https://example.com/en', translation: 'Siehe https://example.com/de', targetLanguage: 'de', options: { allowLocalizedUrls: true } },
    { name: 'a localized query value', source: 'See https://example.com/?a=en', translation: 'Siehe https://example.com/?a=de', targetLanguage: 'de', options: { allowLocalizedUrls: true } },
    { name: 'a localized subdomain', source: 'See https://en.example.com/x', translation: 'Siehe https://de.example.com/x', targetLanguage: 'de', options: { allowLocalizedUrls: true } },
    // Internationalized addresses (RFC 6531): read whole, kept.
    { name: 'an address with an IDN domain kept', source: 'Write to info@münchen.de.', translation: 'Schreiben Sie an info@münchen.de.', targetLanguage: 'de' },
    { name: 'a Cyrillic address kept', source: 'Write to почта@пример.рф', translation: 'Пишите на почта@пример.рф', targetLanguage: 'ru' },
    // Sentence punctuation of other scripts after a URL is not part of it.
    { name: 'Armenian full stop after a URL', source: 'Visit https://example.com/help.', translation: 'Այցելեք https://example.com/help։', targetLanguage: 'hy' },
    { name: 'Urdu full stop after a URL', source: 'Visit https://example.com/help.', translation: 'ملاحظہ کریں: https://example.com/help۔', targetLanguage: 'ur' },
  ],
  invalid: [
    { name: 'an address is not a localized URL', source: 'Mail en@example.com', translation: 'Mail de@example.com', targetLanguage: 'de', options: { allowLocalizedUrls: true }, findings: [{ code: 'changed-url', message: 'E-mail address en@example.com was changed to de@example.com', span: { start: 5, end: 19, in: 'translation' } }] },
    { name: 'a word that names a language is not a locale part', source: 'See https://example.com/english/docs', translation: 'Siehe https://example.com/deutsch/docs', targetLanguage: 'de', options: { allowLocalizedUrls: true }, findings: [{ code: 'changed-url', message: 'URL https://example.com/english/docs was changed to https://example.com/deutsch/docs', span: { start: 6, end: 38, in: 'translation' } }] },
    {
      name: 'two URLs for one: each missing, the other added',
      source: 'See https://a.com and https://b.com',
      translation: 'Siehe https://c.com',
      targetLanguage: 'de',
      findings: [
        { code: 'missing-url', message: 'URL https://a.com is missing from the translation', span: { start: 4, end: 17, in: 'source' } },
        { code: 'missing-url', message: 'URL https://b.com is missing from the translation', span: { start: 22, end: 35, in: 'source' } },
        { code: 'extra-url', message: 'URL https://c.com is not in the source', span: { start: 6, end: 19, in: 'translation' } },
      ],
    },
    { name: 'an address with an IDN domain changed', source: 'Write to info@münchen.de', translation: 'Schreiben Sie an info@köln.de', targetLanguage: 'de', findings: [{ code: 'changed-url', message: 'E-mail address info@münchen.de was changed to info@köln.de', span: { start: 17, end: 29, in: 'translation' } }] },
    { name: 'an address with accents changed', source: 'Write to jörg@example.com', translation: 'Écrivez à jürg@example.com', findings: [{ code: 'changed-url', message: 'E-mail address jörg@example.com was changed to jürg@example.com', span: { start: 10, end: 26, in: 'translation' } }] },
    { name: 'an address added', source: 'See https://a.com', translation: 'Siehe https://a.com und a@b.com', targetLanguage: 'de', findings: [{ code: 'extra-url', message: 'E-mail address a@b.com is not in the source', span: { start: 24, end: 31, in: 'translation' } }] },
    {
      name: 'a URL and an address both changed, each paired with its kind',
      source: 'See https://a.com and a@b.com',
      translation: 'Siehe c@d.com und https://e.com',
      targetLanguage: 'de',
      findings: [
        { code: 'changed-url', message: 'URL https://a.com was changed to https://e.com', span: { start: 18, end: 31, in: 'translation' } },
        { code: 'changed-url', message: 'E-mail address a@b.com was changed to c@d.com', span: { start: 6, end: 13, in: 'translation' } },
      ],
    },
  ],
})
