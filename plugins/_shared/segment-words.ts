// Unicode word segmentation (UAX #29 via Intl.Segmenter, with ICU dictionaries for Thai, CJK, ...),
// so that checks never split words on rules of their own. Segmenters are cached per locale: building
// one is far dearer than using it. ASCII text is scanned by the same rules without the segmenter
// (which costs about 0.6 us per segment), for the locales whose segmenter agrees with the scan
// (ascii-words.ts).
import { agreesWithIcu, eachAsciiSegment, isAscii } from './ascii-words.js'
import { segmentChunked, type TextSegment } from './segment-chunked.js'

export interface WordSegment {
  /** The segment's text. */
  text: string
  /** Start offset in UTF-16 code units. */
  index: number
  /** End offset (exclusive). */
  end: number
  /** A word (letters, numbers, ideographs), as opposed to spaces and punctuation. */
  isWordLike: boolean
}

const segmenters = new Map<string, Intl.Segmenter>()

function segmenterFor(locale: string): Intl.Segmenter {
  let segmenter = segmenters.get(locale)
  if (!segmenter) {
    try {
      segmenter = new Intl.Segmenter(locale, { granularity: 'word' })
    } catch {
      segmenter = new Intl.Segmenter('en', { granularity: 'word' })
    }
    segmenters.set(locale, segmenter)
  }
  return segmenter
}

/** The segments of `text`: scanned when it is ASCII and the locale's rules allow, else from the segmenter. */
function segmentsOf(text: string, locale: string): Iterable<TextSegment> {
  const segmenter = segmenterFor(locale)
  return isAscii(text) && agreesWithIcu(segmenter) ? eachAsciiSegment(text) : segmentChunked(segmenter, text)
}

/** Every segment of `text` (words, spaces, punctuation), in order. */
export function segmentWords(text: string, locale: string): WordSegment[] {
  const out: WordSegment[] = []
  for (const s of segmentsOf(text, locale)) {
    out.push({ text: s.segment, index: s.index, end: s.index + s.segment.length, isWordLike: s.isWordLike ?? false })
  }
  return out
}

/** Only the word-like segments of `text`. */
export function wordsOf(text: string, locale: string): WordSegment[] {
  return [...eachWord(text, locale)]
}

/** The word-like segments of `text`, one at a time: a caller that has seen enough stops early. */
export function* eachWord(text: string, locale: string): Generator<WordSegment> {
  for (const s of segmentsOf(text, locale)) {
    if (s.isWordLike) yield { text: s.segment, index: s.index, end: s.index + s.segment.length, isWordLike: true }
  }
}
