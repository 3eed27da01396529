// Characters that do not belong in a translation for its language: letters of another script
// (Cyrillic in Greek), lookalike letters of another script inside a word ("Пpивет" with a Latin
// "p"), the replacement character U+FFFD left by a broken encoding, control characters and lone
// surrogates. The language's scripts come from CLDR likely subtags; Common and Inherited
// characters (digits, punctuation, symbols, emoji, combining marks) are always allowed, and Latin
// is allowed by default for brand names, code and placeholders.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'
import { scriptName, scriptOfChar, scriptsOfLocale } from '../_shared/language-scripts.js'

/** Scripts with letters that look alike: a word mixing two of them is almost always a typo or a spoof. */
const CONFUSABLE = (['Latn', 'Cyrl', 'Grek'] as const).map((code) => [code, new RegExp(`\\p{sc=${code}}`, 'u')] as const)
const confusableScriptOf = (ch: string) => CONFUSABLE.find(([, re]) => re.test(ch))?.[0]
const LETTERS = /[\p{L}\p{M}]+/gu
const GREEK = /\p{sc=Grek}/u
const CONTROL = /[\p{Cc}\p{Cs}\uFFFD]/gu

/** Is chars[i] a Greek letter with no Greek letter beside it? */
function loneGreek(chars: string[], i: number): boolean {
  return GREEK.test(chars[i]!) && !GREEK.test(chars[i - 1] ?? '') && !GREEK.test(chars[i + 1] ?? '')
}

const { messages, report } = defineMessages({
  'broken-character': {
    severity: 'error',
    meaning: 'The translation has a control character, a lone surrogate or the replacement character U+FFFD that the source does not have.',
    text: (d: { ch: string }) => `The translation contains ${describeControl(d.ch)}`,
  },
  'mixed-script-word': {
    severity: 'error',
    meaning: 'A word mixes letters of lookalike scripts (a Latin "p" in a Cyrillic word), with `mixedScriptWords`.',
    text: (d: { word: string; main: string; strays: string }) => `The word "${d.word}" mixes ${d.main} letters with ${d.strays}`,
  },
  'foreign-letters': {
    severity: 'error',
    meaning: 'A word of the translation has letters of a script the target language does not use (nor `allow`, nor Latin with `allowLatin`).',
    text: (d: { scripts: string[]; letters: string; written: string }) => `${d.scripts.join(' and ')} letters "${d.letters}" in a translation written in ${d.written}`,
  },
})

function describeControl(ch: string): string {
  if (ch === '\uFFFD') return 'the replacement character U+FFFD (a broken encoding)'
  const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
  return /\p{Cs}/u.test(ch) ? `a lone surrogate U+${code}` : `the control character U+${code}`
}

export default definePlugin({
  name: 'charset',
  description: 'The translation uses only characters of its language\'s scripts (plus Latin, digits, punctuation, symbols), no mixed-script words, control or replacement characters.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      scripts: {
        type: 'array', items: { type: 'string', pattern: '^[A-Za-z_]+$' },
        description: 'Unicode scripts allowed, overriding those of the target language (`Cyrl`, `Greek`, `Han`, ...).',
      },
      allowLatin: { type: 'boolean', default: true, description: 'Allow Latin letters in every language (brand names, code, placeholders).' },
      allow: { type: 'string', description: 'More characters to allow, as a regular expression character class such as `[µπ€]`.' },
      mixedScriptWords: { type: 'boolean', default: true, description: 'Report words that mix Latin, Cyrillic and Greek letters.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    let extra: RegExp | undefined
    if (options.allow) {
      try {
        extra = new RegExp(`^(?:${options.allow})$`, 'u')
      } catch (error) {
        throw new Error(`charset: option "allow" is not a valid character class: ${(error as Error).message}`)
      }
    }
    const override = options.scripts
    // An unknown script is a load error, naming the option.
    if (override) {
      for (const s of override) {
        try {
          new RegExp(`\\p{scx=${s}}`, 'u')
        } catch {
          throw new Error(`charset: option "scripts": "${s}" is not a Unicode script name or code`)
        }
      }
    }
    const allowedCache = new Map<string, { re: RegExp | undefined; names: string[] }>()
    const allowedFor = (locale: string) => {
      let entry = allowedCache.get(locale)
      if (!entry) {
        const scripts = override ?? scriptsOfLocale(locale)
        const all = [...scripts, ...(options.allowLatin ? ['Latn'] : [])]
        // Unknown language and no override: no script to hold it to.
        const re = scripts.length
          ? new RegExp(`[^\\p{sc=Zyyy}\\p{sc=Zinh}\\s${all.map((s) => `\\p{scx=${s}}`).join('')}]`, 'u')
          : undefined
        entry = { re, names: scripts.map(scriptName) }
        allowedCache.set(locale, entry)
      }
      return entry
    }

    return {
      check(item): FindingInput[] {
        const text = item.translation
        if (!text) return []
        const locale = localeOf(item.targetLanguage)
        const findings: FindingInput[] = []

        // The source's control characters once, not a search of the source per one in the translation.
        const sourceControls = new Set(item.source.match(CONTROL))
        for (const m of text.matchAll(CONTROL)) {
          if (m[0] === '\t' || m[0] === '\n' || m[0] === '\r') continue
          if (sourceControls.has(m[0])) continue
          findings.push(report('broken-character', { ch: m[0] }, { span: { start: m.index, end: m.index + m[0].length } }))
        }

        const { re: disallowed, names } = allowedFor(locale)
        // Words of the source (names, language names in a language picker) may stay as they are.
        const sourceWords = new Set(item.source.match(LETTERS) ?? [])
        for (const m of text.matchAll(LETTERS)) {
          const word = m[0]
          if (sourceWords.has(word)) continue
          const span = { start: m.index, end: m.index + word.length }
          const chars = [...word]
          const byScript = new Map<string, string[]>()
          for (const [i, ch] of chars.entries()) {
            // A Greek letter opening or closing a word is a unit or symbol (µm, Ωcm, α版), not a lookalike.
            if ((i === 0 || i === chars.length - 1) && loneGreek(chars, i)) continue
            const s = confusableScriptOf(ch)
            if (!s) continue
            const list = byScript.get(s)
            if (list) list.push(ch)
            else byScript.set(s, [ch])
          }
          if (options.mixedScriptWords && byScript.size > 1) {
            // The script with most letters is the word's; the others are the lookalikes.
            const [main, ...others] = [...byScript].sort((a, b) => b[1].length - a[1].length)
            const strays = others.map(([s, chars]) => `${scriptName(s)} "${chars.join('')}"`).join(', ')
            findings.push(report('mixed-script-word', { word, main: scriptName(main![0]), strays }, { span }))
            continue
          }
          if (!disallowed) continue
          // A lone Greek letter is a symbol in every language: π, µm, Ω, α版 (alpha version).
          const bad = chars.filter((ch, i) => disallowed.test(ch) && !extra?.test(ch) && !loneGreek(chars, i))
          if (bad.length) {
            const foreign = [...new Set(bad.map((ch) => scriptOfChar(ch) ?? 'other'))].map((s) => (s === 'other' ? 'foreign' : scriptName(s)))
            const written = `${names.join(', ')}${options.allowLatin && !names.includes('Latin') ? ' (and Latin)' : ''}`
            findings.push(report('foreign-letters', { scripts: foreign, letters: [...new Set(bad)].join(''), written }, { span }))
          }
        }
        return findings
      },
    }
  },
})
