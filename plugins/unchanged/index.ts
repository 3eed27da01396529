// A translation identical to its source: usually an untranslated string. Many strings legitimately
// stay the same (brand and product names, "OK", codes, placeholders-only strings, en -> en-GB), so
// the check looks only at the translatable words and, by default, leaves single words alone
// (German "Name", French "Menu", Spanish "Email" are correct translations).
import { defineMessages, definePlugin, type FindingInput, type Severity } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'
import { maskNonTranslatables } from '../_shared/non-translatables.js'
import { eachWord, type WordSegment } from '../_shared/segment-words.js'
import { escapeRegExp } from '../_shared/escape-regexp.js'

const { messages, report } = defineMessages({
  'untranslated': {
    severity: ['error', 'warning', 'info'],
    meaning: 'The translatable words of the translation are those of the source: an error, or the `singleWords` severity for a single word.',
    text: 'The translation is identical to the source',
  },
})

/** A word that reads as an acronym or a code rather than as prose. */
function looksLikeCode(word: string): boolean {
  if (/[\p{N}_]/u.test(word)) return true // v2, user_name, H2O
  if (/\p{Ll}\p{Lu}/u.test(word)) return true // iPhone, macOS, eBay
  return word.length <= 5 && !/\p{Ll}/u.test(word) && /\p{Lu}/u.test(word) // HTTP, API (not "CHANGES")
}

/** A word that reads as a name (capitalised), an acronym or a code. */
function looksLikeName(word: string): boolean {
  return looksLikeCode(word) || /^\p{Lu}\p{Ll}/u.test(word)
}

export default definePlugin({
  name: 'unchanged',
  description: 'The translation is not a copy of the source (names, codes and single words aside).',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ignoreCase: { type: 'boolean', default: true, description: 'Compare without regard to case.' },
      ignoreWhitespace: { type: 'boolean', default: true, description: 'Compare with leading, trailing and repeated whitespace ignored.' },
      allow: {
        type: 'array', items: { type: 'string', minLength: 1 }, default: [],
        description: 'Words or whole strings that stay the same in translation (product names, terms).',
      },
      minLength: {
        type: 'integer', minimum: 0, default: 3,
        description: 'Fewest letters (outside placeholders, numbers, URLs and allowed words) a string needs to be checked.',
      },
      singleWords: {
        enum: ['skip', 'warning', 'error'], default: 'skip',
        description: 'What to do with a one-word string left unchanged: many words are the same in related languages.',
      },
      skipProperNouns: {
        type: 'boolean', default: true,
        description: 'Leave strings of at most four capitalised words, acronyms or codes alone ("Google Drive", "HTTP API").',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const allowWhole = new Set(options.allow.map((a) => a.normalize('NFC').toLowerCase()))
    const allowWords = options.allow.length
      ? new RegExp(`(?<![\\p{L}\\p{N}])(?:${options.allow.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}])`, 'giu')
      : undefined
    const normalize = (s: string) => {
      let out = s.normalize('NFC')
      if (options.ignoreWhitespace) out = out.replace(/[\s\u200B]+/gu, ' ').trim()
      if (options.ignoreCase) out = out.toLowerCase()
      return out
    }
    return {
      check(item): FindingInput[] {
        const translation = item.translation
        if (!translation) return []
        const sourceLocale = localeOf(item.sourceLanguage)
        const targetLocale = localeOf(item.targetLanguage)
        // en -> en-GB, pt-BR -> pt-PT: the same words are the right answer.
        if (sourceLocale.split('-')[0] === targetLocale.split('-')[0]) return []
        const normalized = normalize(translation)
        if (normalized !== normalize(item.source) || normalized === '') return []
        if (allowWhole.has(normalized)) return []

        let masked = maskNonTranslatables(translation)
        if (allowWords) masked = masked.replace(allowWords, (m) => ' '.repeat(m.length))
        // A word counts only with a letter: a text with none has no word to segment for.
        if (!/\p{L}/u.test(masked)) return []
        // What follows needs at most five words (one, or up to four names) and minLength letters:
        // a long text is not segmented to its end.
        const words: WordSegment[] = []
        let letters = 0
        for (const w of eachWord(masked, sourceLocale)) {
          const count = w.text.match(/\p{L}/gu)?.length ?? 0
          if (count === 0) continue
          words.push(w)
          letters += count
          if (words.length > 4 && letters >= options.minLength) break
        }
        if (words.length === 0 || letters < options.minLength) return []
        let severity: Severity = 'error'
        if (words.length === 1) {
          if (options.singleWords === 'skip' || looksLikeCode(words[0]!.text)) return []
          severity = options.singleWords
        } else if (options.skipProperNouns && words.length <= 4 && words.every((w) => looksLikeName(w.text))) {
          return []
        }
        return [report('untranslated', { severity, span: { start: 0, end: translation.length } })]
      },
    }
  },
})
