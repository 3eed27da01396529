import { PluginTester } from '../../src/engine/plugin-tester.js'
import urls from './index.js'

new PluginTester().run(urls, {
  valid: [
    { source: 'Visit https://example.com/help.', translation: 'Rendez-vous sur https://example.com/help.' },
    { name: 'trailing punctuation is not part of the URL', source: 'See https://example.com/docs.', translation: 'Siehe https://example.com/docs', targetLanguage: 'de' },
    { name: 'CJK text around the URL', source: 'Visit https://example.com for details.', translation: '详情请访问https://example.com。', targetLanguage: 'zh-CN' },
    { source: 'Write to support@example.com', translation: 'اكتب إلى support@example.com', targetLanguage: 'ar' },
    { source: 'Write to support@example.com', translation: 'כתבו אל support@example.com', targetLanguage: 'he' },
    { source: 'Open (https://en.wikipedia.org/wiki/Unicode_(disambiguation))', translation: 'Открыть (https://en.wikipedia.org/wiki/Unicode_(disambiguation))', targetLanguage: 'ru' },
    { name: 'localized path when allowed', source: 'See https://example.com/en/docs', translation: 'Siehe https://example.com/de/docs', targetLanguage: 'de', options: { allowLocalizedUrls: true } },
    { name: 'localized subdomain when allowed', source: 'See https://en.example.com/docs', translation: 'ดูที่ https://th.example.com/docs', targetLanguage: 'th', options: { allowLocalizedUrls: true } },
    { name: 'localized query when allowed', source: 'Go to https://example.com/?lang=en-US', translation: 'Μετάβαση στο https://example.com/?lang=el-GR', targetLanguage: 'el', options: { allowLocalizedUrls: true } },
    { source: 'Download from www.example.org!', translation: 'www.example.org से डाउनलोड करें!', targetLanguage: 'hi' },
    { name: 'no URL at all', source: 'Time: 10:30', translation: 'Heure : 10:30' },
    // Invisible format characters end a URL, never part of it (the URL read as "changed" before).
    { name: 'URL isolated in LRI…PDI in RTL text', source: 'See https://example.com/path now', translation: 'راجع \u2066https://example.com/path\u2069 الآن', targetLanguage: 'ar' },
    { name: 'URL followed by RLM', source: 'See https://example.com/path now', translation: 'راجع https://example.com/path\u200f.', targetLanguage: 'ar' },
    { name: 'URL followed by ZWSP', source: 'See https://example.com/path now', translation: 'Voir https://example.com/path\u200b' },
    // A punycode host and its Unicode form are the same host (compared by url.domainToASCII).
    { name: 'a Unicode host written in punycode', source: 'See https://münchen.de/stadtplan', translation: 'Siehe https://xn--mnchen-3ya.de/stadtplan', targetLanguage: 'de' },
    { name: 'a punycode host written in Unicode, with a port and a user', source: 'Open http://user@xn--mnchen-3ya.de:8080/?q=1', translation: 'Öffnen Sie http://user@münchen.de:8080/?q=1', targetLanguage: 'de' },
    { name: 'www. host in the other form', source: 'Go to www.münchen.de/info', translation: 'Gehe zu www.xn--mnchen-3ya.de/info', targetLanguage: 'de' },
    { name: 'an address domain in punycode', source: 'Write to info@münchen.de', translation: 'Schreiben Sie an info@xn--mnchen-3ya.de', targetLanguage: 'de' },
    { name: 'a mailto: domain in punycode', source: 'Mail mailto:info@xn--mnchen-3ya.de?subject=Hi', translation: 'Mail mailto:info@münchen.de?subject=Hi', targetLanguage: 'de' },
    { name: 'host case ignored', source: 'See https://Example.COM/Docs', translation: 'Voir https://example.com/Docs' },
  ],
  invalid: [
    { source: 'Visit https://example.com/help', translation: 'Rendez-vous sur https://exemple.com/aide', findings: [{ code: 'changed-url', in: 'translation', message: 'URL https://example.com/help was changed to https://exemple.com/aide' }] },
    { source: 'Visit https://example.com/help', translation: 'Besuchen Sie unsere Hilfe', targetLanguage: 'de', findings: [{ code: 'missing-url', span: { start: 6, end: 30, in: 'source' } }] },
    { name: 'localized path when not allowed', source: 'See https://example.com/en/docs', translation: 'Siehe https://example.com/de/docs', targetLanguage: 'de', findings: [{ code: 'changed-url', span: { start: 6, end: 33, in: 'translation' } }] },
    { source: 'Write to support@example.com', translation: 'اكتب إلى help@example.com', targetLanguage: 'ar', findings: [{ code: 'changed-url', in: 'translation', message: 'E-mail address support@example.com was changed' }] },
    { source: 'Contact us', translation: 'Свяжитесь с нами: sales@example.ru', targetLanguage: 'ru', findings: [{ code: 'extra-url', in: 'translation', message: 'E-mail address sales@example.ru is not in the source' }] },
    { source: 'Visit https://example.com for details.', translation: '详情请访问http://example.com。', targetLanguage: 'zh-CN', findings: [{ code: 'changed-url', span: { start: 5, end: 23, in: 'translation' } }] },
    { name: 'a foreign locale is still a change', source: 'See https://example.com/en/docs', translation: 'Δείτε https://example.com/fr/docs', targetLanguage: 'el', options: { allowLocalizedUrls: true }, findings: [{ code: 'changed-url', span: { start: 6, end: 33, in: 'translation' } }] },
    { source: 'Download from www.example.org', translation: 'www.example.com से डाउनलोड करें', targetLanguage: 'hi', findings: [{ code: 'changed-url', span: { start: 0, end: 15, in: 'translation' } }] },
    { name: 'the path stays strict next to a punycode host', source: 'See https://münchen.de/Stadtplan', translation: 'Siehe https://xn--mnchen-3ya.de/stadtplan', targetLanguage: 'de', findings: [{ code: 'changed-url', message: 'URL https://münchen.de/Stadtplan was changed to https://xn--mnchen-3ya.de/stadtplan', in: 'translation' }] },
    { name: 'the path stays strict: percent-encoding is a change', source: 'See https://münchen.de/straße', translation: 'Siehe https://münchen.de/stra%C3%9Fe', targetLanguage: 'de', findings: [{ code: 'changed-url', in: 'translation' }] },
    { name: 'another Unicode host', source: 'Write to info@münchen.de', translation: 'Schreiben Sie an info@xn--mnchen-4ya.de', targetLanguage: 'de', findings: [{ code: 'changed-url', in: 'translation' }] },
    { name: 'an address local part keeps its case', source: 'Write to Info@example.com', translation: 'Schreiben Sie an info@EXAMPLE.com', targetLanguage: 'de', findings: [{ code: 'changed-url', message: 'Info@example.com was changed to info@EXAMPLE.com', in: 'translation' }] },
    { source: 'See https://a.example.com and https://b.example.com', translation: 'ดู https://a.example.com', targetLanguage: 'th', findings: [{ code: 'missing-url', in: 'source', message: 'https://b.example.com is missing' }] },
  ],
})
