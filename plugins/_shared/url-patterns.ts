// URLs and e-mail addresses in running text. Sentence punctuation after a URL ("see
// https://example.com.") and an unbalanced closing bracket are not part of it; CJK, Thai and
// full-width characters end a URL because those scripts write it with no space around it.
// Invisible format characters end a URL too: bidi marks, embeddings and isolates (an LTR URL in
// RTL text is best wrapped in LRI…PDI), zero-width spaces and joiners, the word joiner and the
// soft hyphen. None is ever part of a URL, and read into one it made an unchanged URL "changed".
import { maskSpans } from './mask-spans.js'
import { keepRecentScans } from './recent-scans.js'

export interface FoundUrl {
  text: string
  start: number
  end: number
  kind: 'url' | 'email'
}

const STOP = '\\s<>"`{}|\\\\^«»“”„‘’‹›\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\u3000-\\u303f\\uff00-\\uffef،؛؟।\\u0001'
// Bidi marks (LRM, RLM, ALM), embeddings, overrides and isolates; ZWSP, ZWNJ, ZWJ; word joiner
// and invisible operators; soft hyphen; BOM / zero-width no-break space (also in `\s`).
const INVISIBLE = '\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\u061c\\u00ad\\ufeff'
const URL = new RegExp(`(?<![\\w@])(?:[A-Za-z][A-Za-z0-9+.-]{1,15}://|www\\.|mailto:)[^${STOP}${INVISIBLE}]+`, 'gu')
// E-mail addresses, internationalized ones too (RFC 6531/6532: `jörg@müller.de`, `почта@пример.рф`,
// a punycode TLD `.xn--p1ai`) in the scripts written with spaces around them: Latin, Greek,
// Cyrillic, Armenian, Georgian, and combining accents. Not Hebrew or Arabic, whose prefixes (ל, و)
// may be written against an address, nor CJK, Thai or Korean, written with no space around it.
const LETTER = '\\p{Script=Latin}\\p{Script=Greek}\\p{Script=Cyrillic}\\p{Script=Armenian}\\p{Script=Georgian}\\u0300-\\u036f'
const LABEL = `[${LETTER}0-9](?:[${LETTER}0-9-]*[${LETTER}0-9])?`
const EMAIL = new RegExp(`(?<![${LETTER}0-9_.+%-])[${LETTER}0-9_.%+-]+@${LABEL}(?:\\.${LABEL})*\\.(?:[${LETTER}]{2,}|xn--[A-Za-z0-9-]*[A-Za-z0-9])(?![${LETTER}0-9_-])`, 'gu')
// Sentence punctuation, of other scripts too: Armenian ։, Urdu ۔, Devanagari ॥, Tibetan །,
// Myanmar ၊ ။, Ethiopic ። ፣ ፤ ፥ ፦ ፧.
const TRAILING = new Set('.,;:!?…\'*։۔॥།၊။።፣፤፥፦፧')
const PAIRS = [['(', ')'], ['[', ']']] as const

/**
 * The URL without sentence punctuation and unbalanced closing brackets at its end. One pass from
 * the end with the brackets counted once: stripping with a regex and recounting by `split` per
 * character stripped was quadratic on a URL followed by many `)` or `.`.
 */
function trimUrl(url: string): string {
  const count = (ch: string) => {
    let n = 0
    for (let i = 0; i < url.length; i++) if (url[i] === ch) n++
    return n
  }
  // Only closers and punctuation are stripped, so the openers' counts never change.
  const opens = PAIRS.map(([open]) => count(open))
  const closes = PAIRS.map(([, close]) => count(close))
  let end = url.length
  for (let before = -1; before !== end; ) {
    before = end
    while (end > 0 && TRAILING.has(url[end - 1]!)) end--
    PAIRS.forEach(([, close], k) => {
      if (end > 0 && url[end - 1] === close && opens[k]! < closes[k]!) {
        closes[k]!--
        end--
      }
    })
  }
  return url.slice(0, end)
}

/**
 * The URLs and e-mail addresses of a text, in order. The answer for a long text is kept for the
 * next check that asks (recent-scans.ts): frozen, never to be changed.
 */
export const findUrls: (text: string) => ReadonlyArray<Readonly<FoundUrl>> = keepRecentScans(scanUrls, { max: 32, minLength: 1024 })

function scanUrls(text: string): FoundUrl[] {
  if (!/[:@]|www\./.test(text)) return []
  const out: FoundUrl[] = []
  for (const m of text.matchAll(URL)) {
    const t = trimUrl(m[0])
    if (/^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|www\.|mailto:)$/.test(t)) continue
    out.push({ text: t, start: m.index, end: m.index + t.length, kind: 'url' })
  }
  const rest = maskSpans(text, out)
  for (const m of rest.matchAll(EMAIL)) out.push({ text: m[0], start: m.index, end: m.index + m[0].length, kind: 'email' })
  return out.sort((a, b) => a.start - b.start)
}
