// TBX (ISO 30042) glossaries, v2 (`langSet`) and v3 (`langSec`): every concept (`termEntry`,
// `conceptEntry`) gives one rule per ordered pair of its languages. Terms marked deprecated,
// superseded or not recommended (administrativeStatus, normativeAuthorization) are forbidden.
import { findAll, parseXml, textOf, type XmlElement } from './parse-xml.js'
import type { GlossaryEntry } from './glossary-entry.js'

const FORBIDDEN_STATUS = /deprecated|superseded|forbidden|notRecommended|rejected/i

interface LanguageTerms { preferred: string[]; forbidden: string[] }

function termsOfLanguage(section: XmlElement): LanguageTerms {
  const result: LanguageTerms = { preferred: [], forbidden: [] }
  // A term's status lives beside it, in its tig / ntig / termSec.
  const groups = [...findAll(section, 'tig'), ...findAll(section, 'ntig'), ...findAll(section, 'termSec')]
  const holders = groups.length ? groups : [section]
  for (const holder of holders) {
    const statuses = [...findAll(holder, 'termNote'), ...findAll(holder, 'descrip')]
      .filter((n) => /administrativeStatus|normativeAuthorization|usageStatus/i.test(n.attrs.type ?? ''))
      .map(textOf)
    const isForbidden = statuses.some((s) => FORBIDDEN_STATUS.test(s))
    for (const term of findAll(holder, 'term')) {
      const text = textOf(term)
      if (text) (isForbidden ? result.forbidden : result.preferred).push(text)
    }
  }
  return result
}

export function parseTbx(xml: string): GlossaryEntry[] {
  const doc = parseXml(xml)
  const entries: GlossaryEntry[] = []
  for (const concept of [...findAll(doc, 'termEntry'), ...findAll(doc, 'conceptEntry')]) {
    const languages = new Map<string, LanguageTerms>()
    for (const section of [...findAll(concept, 'langSet'), ...findAll(concept, 'langSec')]) {
      const lang = section.attrs['xml:lang'] ?? section.attrs.lang
      if (!lang) continue
      const terms = termsOfLanguage(section)
      const known = languages.get(lang)
      if (known) {
        known.preferred.push(...terms.preferred)
        known.forbidden.push(...terms.forbidden)
      } else languages.set(lang, terms)
    }
    for (const [sourceLanguage, sourceTerms] of languages) {
      for (const [language, targetTerms] of languages) {
        if (language === sourceLanguage) continue
        if (!targetTerms.preferred.length && !targetTerms.forbidden.length) continue
        for (const source of sourceTerms.preferred) {
          entries.push({ source, sourceLanguage, language, targets: targetTerms.preferred, forbidden: targetTerms.forbidden })
        }
      }
    }
  }
  return entries
}
