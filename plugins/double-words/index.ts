// A word typed twice by mistake ("the the", "le le", "на на"). Words come from Unicode word
// segmentation; only repeats separated by whitespace count, so hyphenated reduplication
// ("anak-anak", "чуть-чуть") and scripts written without spaces (谢谢, 人人, 時々, Thai) never
// look like a repeat. Grammatical repeats are exceptions per language, and a repeat the source
// has too (a "bye bye" in the source) is intended. A repeat is an error where it is unambiguous,
// a warning where the language has a grammatical reading of it (repeat-severity.ts).
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'
import { segmentWords, type WordSegment } from '../_shared/segment-words.js'
import { hasSpacelessScript } from '../_shared/language-scripts.js'
import { repeatSeverity } from './repeat-severity.js'

/** Repeats that are grammatical or idiomatic, per language ('*': any language). */
const EXCEPTIONS: Record<string, string[]> = {
  '*': ['bye', 'ha', 'haha', 'hey', 'bla', 'blah', 'tsk', 'tut', 'knock', 'chop', 'boom', 'tick', 'ding', 'beep', 'ok', 'okay'],
  en: ['that', 'had', 'do', 'no', 'yes', 'so', 'very', 'far', 'much', 'many', 'really', 'little'],
  fr: ['nous', 'vous', 'si', 'très', 'oui', 'non'],
  de: ['sie', 'ja', 'nein', 'sehr'],
  nl: ['ja', 'nee', 'heel'],
  es: ['sí', 'no', 'muy'],
  pt: ['sim', 'não', 'muito'],
  it: ['sì', 'no', 'molto', 'piano', 'via'],
  ru: ['да', 'нет', 'очень', 'так', 'ну'],
  uk: ['так', 'ні', 'дуже', 'ну'],
  pl: ['tak', 'nie', 'bardzo', 'no'],
  cs: ['ano', 'ne', 'velmi'],
  el: ['ναι', 'όχι', 'πολύ', 'σιγά'],
  ar: ['جدا', 'جداً', 'رويدا', 'نعم', 'لا'],
  ko: ['네', '아니요', '정말', '하나', '천천히'],
  sv: ['ja', 'nej', 'mycket'],
  da: ['ja', 'nej', 'meget'],
  nb: ['ja', 'nei', 'veldig'],
  fi: ['kyllä', 'ei', 'hyvin', 'tosi'],
  hu: ['igen', 'nem', 'nagyon'],
  ro: ['da', 'nu', 'foarte'],
}

/**
 * Relative pronouns after an article or pronoun of the same form, grammatical only at the start of
 * a relative clause, after a comma: German "Kinder, die die Schule besuchen", Dutch "…, die die".
 */
const AFTER_COMMA: Record<string, string[]> = {
  de: ['die', 'der', 'das', 'den', 'dem'],
  nl: ['die', 'dat'],
}

/**
 * Languages where reduplication with a space is productive grammar (Turkish "yavaş yavaş", Hindi
 * "धीरे धीरे", Hebrew "לאט לאט", Vietnamese "từ từ", Persian "کم کم"): there, only the listed
 * function words, which are never reduplicated, count as mistakes.
 */
const REDUPLICATING: Record<string, string[]> = {
  tr: ['ve', 'bir', 'bu', 'şu', 'ile', 'için', 'de', 'da', 'ki', 'mi', 'ama'],
  az: ['və', 'bir', 'bu', 'ilə', 'üçün'],
  hi: ['में', 'का', 'की', 'के', 'है', 'हैं', 'को', 'से', 'और', 'ने', 'पर', 'यह', 'कि'],
  mr: ['आणि', 'आहे', 'या', 'हे', 'की'],
  ne: ['र', 'छ', 'को', 'मा', 'ले'],
  bn: ['এবং', 'এই', 'করে', 'হয়', 'ও', 'যে'],
  ur: ['کے', 'کی', 'کا', 'میں', 'ہے', 'اور', 'کو', 'سے', 'نے', 'پر', 'یہ'],
  fa: ['و', 'از', 'به', 'در', 'را', 'که', 'این', 'با', 'برای', 'است'],
  he: ['את', 'של', 'על', 'עם', 'אל', 'זה', 'הוא', 'היא', 'או'],
  id: ['yang', 'dan', 'di', 'ke', 'dari', 'untuk', 'ini', 'itu', 'dengan', 'atau'],
  ms: ['yang', 'dan', 'di', 'ke', 'dari', 'untuk', 'ini', 'itu', 'dengan', 'atau'],
  tl: ['ang', 'ng', 'sa', 'mga', 'at', 'na'],
  vi: ['của', 'và', 'các', 'những', 'là', 'được', 'cho', 'với', 'này', 'cái', 'một', 'trong', 'đã', 'sẽ', 'để'],
  sw: ['na', 'ya', 'wa', 'kwa', 'za', 'la'],
  ta: ['மற்றும்', 'ஒரு', 'இந்த'],
  te: ['మరియు', 'ఒక', 'ఈ'],
}

/** Is there a comma before `index`, with only whitespace between? (No slice: this runs per repeat.) */
function afterComma(text: string, index: number): boolean {
  let i = index
  while (i > 0 && /\s/u.test(text[i - 1]!)) i--
  return text[i - 1] === ','
}

const SEPARATED_BY_SPACE = /^[\s\u00A0\u202F]+$/u

const { messages, report } = defineMessages({
  'repeated-word': {
    severity: ['error', 'warning'],
    meaning: 'A word is written twice in a row: an error, a warning where the language has a grammatical reading of the repeat (German "die die", English "is is").',
    text: (d: { word: string }) => `The word "${d.word}" is repeated`,
  },
})

interface Repeat { first: WordSegment; second: WordSegment }

const WHITESPACE_RUN = /[\s\u00A0\u202F]+/u
// U+202F (narrow no-break space) may end a word or join two (UAX #29 ExtendNumLet: after letters
// and digits it does), and U+FEFF is a format character the segmenter ignores inside a word. A
// text with either is also read with them kept inside the tokens.
const JOINING_SPACE = /[\u202F\uFEFF]/
const WORD_ENDING_SPACE = /[^\S\u202F\uFEFF]+/u

/**
 * Letters of alphabets the segmenter never splits between (UAX #29 WB5, WB9, WB10: letters and
 * ASCII digits run on), so no word can start or end between two of them. Other scripts, marks and
 * the rest may be word boundaries, and are taken to be.
 */
const JOINED = new RegExp('[\\p{L}&&[\\p{sc=Latin}\\p{sc=Greek}\\p{sc=Cyrillic}]]|[0-9]', 'v')
const joinedAt = (s: string, i: number) => JOINED.test(s[i]!)

const NO_OVERLAP: number[] = []

/**
 * Every k such that `a` ends with the first k characters of `b`, longest first. The prefix
 * function (Knuth-Morris-Pratt) of `b`'s start, a separator and `a`'s end gives them all in time
 * linear in the two tokens; comparing every k by hand was quadratic in a long token.
 */
function overlaps(a: string, b: string): number[] {
  const m = Math.min(a.length, b.length)
  // A border of length k needs a's k-th last character to be b's first and a's last to be b's
  // k-th: most neighbouring tokens have no such k, and are answered without allocating.
  const first = b.charCodeAt(0)
  const last = a.charCodeAt(a.length - 1)
  let possible = false
  for (let k = 1; k <= m && !possible; k++) possible = a.charCodeAt(a.length - k) === first && b.charCodeAt(k - 1) === last
  if (!possible) return NO_OVERLAP
  const codes = new Int32Array(2 * m + 1)
  for (let i = 0; i < m; i++) codes[i] = b.charCodeAt(i)
  codes[m] = -1 // matches no code unit: no border crosses it
  for (let i = 0; i < m; i++) codes[m + 1 + i] = a.charCodeAt(a.length - m + i)
  const border = new Int32Array(codes.length)
  for (let i = 1; i < codes.length; i++) {
    let k = border[i - 1]!
    while (k > 0 && codes[i] !== codes[k]) k = border[k - 1]!
    border[i] = codes[i] === codes[k] ? k + 1 : 0
  }
  const out: number[] = []
  for (let k = border[codes.length - 1]!; k > 0; k = border[k - 1]!) out.push(k)
  return out
}

/**
 * Could the text hold a word repeated with only whitespace between? Then some word W ends one
 * whitespace-separated token and starts the next: the token's last k characters equal the next
 * token's first k, for some k, and W does not start or end inside a run of letters the segmenter
 * keeps together ("files saved" ends and starts with "s", but "s" is no word of either). Most
 * texts fail this at once, and the segmenter (the dear part) runs only on the rest (bench).
 */
export function mayRepeat(text: string, locale: string): boolean {
  // Lowercased whole, once (ICU's locale-aware lowering is dear); whitespace ends a word either
  // way, so the tokens are the ones lowering each token would give.
  const localeLowered = text.toLocaleLowerCase(locale)
  const plainLowered = text.toLowerCase()
  const splits = JOINING_SPACE.test(text) ? [WHITESPACE_RUN, WORD_ENDING_SPACE] : [WHITESPACE_RUN]
  for (const lowered of plainLowered === localeLowered ? [localeLowered] : [localeLowered, plainLowered]) {
    for (const split of splits) if (overlappingTokens(lowered.split(split))) return true
  }
  return false
}

/** Do two neighbouring tokens share a word, one's last and the other's first? */
function overlappingTokens(tokens: string[]): boolean {
  for (let i = 1; i < tokens.length; i++) {
    const a = tokens[i - 1]!
    const b = tokens[i]!
    for (const k of overlaps(a, b)) {
      if (k < a.length && joinedAt(a, a.length - k - 1) && joinedAt(a, a.length - k)) continue
      if (k < b.length && joinedAt(b, k - 1) && joinedAt(b, k)) continue
      return true
    }
  }
  return false
}

/** Words repeated with only whitespace between them, compared case-insensitively. */
export function repeats(text: string, locale: string, prefilter = true): Repeat[] {
  if (prefilter && !mayRepeat(text, locale)) return []
  const segments = segmentWords(text, locale)
  const out: Repeat[] = []
  let previous: WordSegment | undefined
  // Each word lowered once, and only after a gap of whitespace; the same text needs no lowering.
  let previousLowered: string | undefined
  let gap = ''
  for (const s of segments) {
    if (!s.isWordLike) {
      gap += s.text
      continue
    }
    let lowered: string | undefined
    if (previous && SEPARATED_BY_SPACE.test(gap)) {
      if (previous.text === s.text) {
        out.push({ first: previous, second: s })
        lowered = previousLowered
      } else {
        lowered = s.text.toLocaleLowerCase(locale)
        if ((previousLowered ?? previous.text.toLocaleLowerCase(locale)) === lowered) out.push({ first: previous, second: s })
      }
    }
    previous = s
    previousLowered = lowered
    gap = ''
  }
  return out
}

export default definePlugin({
  name: 'double-words',
  description: 'No word is repeated by mistake ("the the"), with grammatical repeats per language allowed.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      exceptions: {
        type: 'object',
        additionalProperties: { type: 'array', items: { type: 'string' } },
        default: {},
        description: 'More words that may be repeated, by language code ("*" for all); added to the built-in list.',
      },
      reduplicating: {
        type: 'object',
        additionalProperties: { type: 'array', items: { type: 'string' } },
        default: {},
        description: 'More languages with productive reduplication, each with the function words that still count as mistakes.',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const lower = (words: string[]) => new Set(words.map((w) => w.toLowerCase()))
    const exceptions = new Map<string, Set<string>>()
    for (const table of [EXCEPTIONS, options.exceptions]) {
      for (const [lang, words] of Object.entries(table)) {
        const key = lang.toLowerCase()
        exceptions.set(key, new Set([...(exceptions.get(key) ?? []), ...lower(words)]))
      }
    }
    const reduplicating = new Map<string, Set<string>>()
    for (const [lang, words] of Object.entries({ ...REDUPLICATING, ...options.reduplicating })) reduplicating.set(lang.toLowerCase(), lower(words))

    return {
      check(item): FindingInput[] {
        const translation = item.translation
        if (!translation) return []
        const locale = localeOf(item.targetLanguage)
        const base = locale.split('-')[0]!.toLowerCase()
        let found = repeats(translation, locale)
        if (found.length === 0) return []
        // The source repeats words too: that many repeats are meant ("Knock knock", "bye bye").
        // The intended ones are taken to be the longest words; "a a", "le le" stay suspect.
        const intended = repeats(item.source, localeOf(item.sourceLanguage)).length
        if (intended >= found.length) return []
        if (intended > 0) {
          const byLength = [...found].sort((a, b) => b.second.text.length - a.second.text.length)
          const meant = new Set(byLength.slice(0, intended))
          found = found.filter((r) => !meant.has(r))
        }

        const allowed = (word: string) =>
          exceptions.get('*')?.has(word) || exceptions.get(base)?.has(word) || exceptions.get(locale.toLowerCase())?.has(word)
        const onlyFunctionWords = reduplicating.get(base)
        const findings: FindingInput[] = []
        const textStart = translation.search(/\S/u)
        for (const { first, second } of found) {
          const word = second.text.toLocaleLowerCase(locale)
          if (!/\p{L}/u.test(word)) continue // "1 1", "2024 2024": numbers, not words
          if (hasSpacelessScript(word)) continue // ideographs, kana, Thai: reduplication, not typos
          if (allowed(word)) continue
          // The first word of a compound: French "en en-tête", English "in in-app purchases".
          if (/^[-\u2010\u2011]\p{L}/u.test(translation.slice(second.end, second.end + 2))) continue
          if (AFTER_COMMA[base]?.includes(word) && afterComma(translation, first.index)) continue
          if (onlyFunctionWords && !onlyFunctionWords.has(word)) continue
          findings.push(report('repeated-word', { word: second.text }, {
            severity: repeatSeverity({ word, first: first.text, second: second.text, before: translation.slice(Math.max(0, first.index - 4), first.index), atStart: first.index === textStart, base, sourceRepeats: intended > 0 }),
            span: { start: first.index, end: second.end },
            suggestion: first.text,
          }))
        }
        return findings
      },
    }
  },
})
