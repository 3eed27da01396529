// Intl.Segmenter over a long text in linear time. V8 (Node 20) copies the whole input string for
// every segment it hands out, so iterating the segments of one long string is quadratic: 40,000
// words took 30 s. Here the text is segmented in pieces of bounded size. A boundary near a
// piece's end may depend on what follows (a combining mark, "a'b", "1,000"), so only segments
// that end at least MARGIN code units before the piece's end are kept, and the next piece starts
// where the last kept one ends: a true boundary, from which the rules read the same. A segment
// longer than a piece makes the piece grow until it fits (amortized linear). Where a text has
// more than MARGIN combining or format characters in a row, or where ICU's dictionaries segment
// Thai or Chinese, a boundary next to a piece's end may differ from one pass over the whole
// text; nothing in the checks depends on that.

export interface TextSegment {
  segment: string
  /** Offset in UTF-16 code units in the whole text. */
  index: number
  isWordLike?: boolean
}

/** Size of the pieces given to the segmenter: each costs at most its size per segment. */
const CHUNK = 256
/** How far past a boundary the segmenter may look to decide it. */
const MARGIN = 64

/** The segments of `text`, as `segmenter.segment(text)` would give them. */
export function* segmentChunked(segmenter: Intl.Segmenter, text: string, chunk = CHUNK, margin = MARGIN): Generator<TextSegment> {
  let start = 0
  let size = chunk + margin
  while (start < text.length) {
    const end = Math.min(text.length, start + size)
    const last = end === text.length
    const piece = text.slice(start, end)
    let next = start
    for (const s of segmenter.segment(piece)) {
      const segmentEnd = s.index + s.segment.length
      if (!last && segmentEnd > piece.length - margin) break
      yield { segment: s.segment, index: start + s.index, isWordLike: s.isWordLike }
      next = start + segmentEnd
      // A grown piece was for its one long segment: the rest in pieces of the usual size again.
      if (size > chunk + margin) break
    }
    if (last && next === end) return
    if (next === start) {
      size *= 2 // one segment spans the piece: a bigger piece
      continue
    }
    start = next
    size = chunk + margin
  }
}
