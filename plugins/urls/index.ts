// URLs and e-mail addresses are kept unchanged in the translation (as a multiset). Sentence
// punctuation after a URL is not part of it. With `allowLocalizedUrls`, a URL whose only change
// is its locale (a path segment, subdomain or query value such as /en/ -> /fr/, en.example.com
// -> fr.example.com, ?lang=en -> ?lang=fr) counts as the same URL. Hosts are compared in their
// ASCII form (punycode, lower case); paths and queries as written.
import { domainToASCII } from 'node:url'
import { defineMessages, definePlugin, type FindingInput, type Language } from '../../src/engine/types.js'
import { baseLanguage } from '../_shared/language-traits.js'
import { multisetDiff } from '../_shared/multiset-diff.js'
import { findUrls, type FoundUrl } from '../_shared/url-patterns.js'

type Address = { kind: FoundUrl['kind']; text: string }
const what = (u: Address) => (u.kind === 'url' ? 'URL' : 'E-mail address')
const { messages, report } = defineMessages({
  'changed-url': { severity: 'error', meaning: 'A URL or e-mail address of the source is changed in the translation (as many in both).', text: (d: { url: Address; to: string }) => `${what(d.url)} ${d.url.text} was changed to ${d.to}` },
  'missing-url': { severity: 'error', meaning: 'A URL or e-mail address of the source is not in the translation.', text: (d: { url: Address }) => `${what(d.url)} ${d.url.text} is missing from the translation` },
  'extra-url': { severity: 'error', meaning: 'The translation has a URL or e-mail address the source does not have.', text: (d: { url: Address }) => `${what(d.url)} ${d.url.text} is not in the source` },
})

const LOCALE_PART = /^([a-z]{2,3})(?:[-_][A-Za-z]{2,4}){0,2}$/i

/** The URL with parts naming one of the languages replaced by a marker. */
function delocalize(url: string, languages: readonly Language[]): string {
  const bases = new Set(languages.map(baseLanguage))
  const swap = (part: string) => {
    const m = LOCALE_PART.exec(part)
    return m && bases.has(m[1]!.toLowerCase()) ? '{locale}' : part
  }
  return url.replace(/(?<=^[a-z][a-z0-9+.-]*:\/\/)[^/.?#:]+(?=\.)/i, swap).replace(/(?<=[/=])[^/?#&=.]+(?=[/?#&]|$)/g, swap)
}

// The host of a URL (after `scheme://` and any `user@`, or after `www.`), of a `mailto:` address
// and of an e-mail address; a bracketed IPv6 host is left alone.
const URL_HOST = /^((?:[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?)|(?=www\.))([^/?#:[\]]+)/i
const MAILTO_HOST = /^(mailto:[^@?#]*@)([^?#,]+)/i
const EMAIL_HOST = /^(.*@)(.+)$/s

/**
 * The address with its host in the form DNS uses: `münchen.de` and `xn--mnchen-3ya.de` are one
 * host, and so are `Example.COM` and `example.com` (url.domainToASCII, as WHATWG URL parsing does).
 * Paths, queries and the local part of an address stay as written: those a server may tell apart.
 */
function asciiHost(u: Address): string {
  const m = (u.kind === 'email' ? EMAIL_HOST : /^mailto:/i.test(u.text) ? MAILTO_HOST : URL_HOST).exec(u.text)
  if (!m) return u.text
  // An invalid domain gives '': such a host is compared as written.
  const host = domainToASCII(m[2]!) || m[2]!
  return m[1]! + host + u.text.slice(m[0].length)
}

export default definePlugin({
  name: 'urls',
  description: 'URLs and e-mail addresses are kept unchanged in the translation.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      allowLocalizedUrls: { type: 'boolean', default: false, description: 'Accept a URL whose only change is a locale segment (/en/ -> /fr/, en.example.com -> fr.example.com, ?lang=en -> ?lang=fr).' },
      emails: { type: 'boolean', default: true, description: 'Check e-mail addresses too.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item) {
        const pick = (text: string) => findUrls(text).filter((u) => options.emails || u.kind === 'url')
        const source = pick(item.source)
        const target = pick(item.translation ?? '')
        if (!source.length && !target.length) return []
        const languages = [item.sourceLanguage, item.targetLanguage]
        const key = (u: FoundUrl) => (options.allowLocalizedUrls && u.kind === 'url' ? delocalize(asciiHost(u), languages) : asciiHost(u))
        const diff = multisetDiff(source, target, key)
        const findings: FindingInput[] = []
        const extra = [...diff.extra]
        for (const u of diff.missing) {
          const changed = extra.findIndex((t) => t.kind === u.kind)
          if (changed !== -1 && source.length === target.length) {
            const t = extra.splice(changed, 1)[0]!
            findings.push(report('changed-url', { url: u, to: t.text }, { span: { start: t.start, end: t.end, in: 'translation' } }))
            continue
          }
          findings.push(report('missing-url', { url: u }, { span: { start: u.start, end: u.end, in: 'source' } }))
        }
        for (const t of extra) {
          findings.push(report('extra-url', { url: t }, { span: { start: t.start, end: t.end, in: 'translation' } }))
        }
        return findings
      },
    }
  },
})
