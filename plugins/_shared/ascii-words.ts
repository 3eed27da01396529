// Word segmentation of ASCII text without Intl.Segmenter. V8 spends about 0.6 us on each segment it
// hands out, whatever the text, so a 50 KB translation of short words or punctuation ("word "
// 10,000 times, 48,000 brackets) cost double-words 18-36 ms a pass (issue 17's bench). For ASCII
// the Unicode word-break rules (UAX #29) come down to a few classes, scanned here in one pass.
//
// ICU tailors the rules for some locales (en-US-POSIX keeps ":" and "." out of words), so the scan
// is used for a locale only once it has agreed with that locale's Intl.Segmenter on a fixed set of
// texts built to reach every rule and every ASCII character (`agreesWithIcu`); otherwise callers
// keep the segmenter. A property test compares the two on random ASCII texts for many locales.

/** A segment of the text, as Intl.Segmenter gives it. */
export interface AsciiSegment {
  segment: string
  index: number
  isWordLike: boolean
}

// Word_Break classes of the ASCII characters (UAX #29, table 3).
const OTHER = 0
const CR = 1
const LF = 2
const NEWLINE = 3
const SPACE = 4 // WSegSpace
const LETTER = 5 // ALetter
const DIGIT = 6 // Numeric
const UNDERSCORE = 7 // ExtendNumLet
const MID_LETTER = 8 // ":"
const MID_NUM_LET = 9 // "." and "'" (MidNumLetQ)
const MID_NUM = 10 // "," and ";"

const CLASS = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  CLASS[c] = ch === '\r' ? CR : ch === '\n' ? LF : ch === '\v' || ch === '\f' ? NEWLINE : ch === ' ' ? SPACE
    : /[A-Za-z]/.test(ch) ? LETTER : /[0-9]/.test(ch) ? DIGIT : ch === '_' ? UNDERSCORE : ch === ':' ? MID_LETTER
      : ch === '.' || ch === "'" ? MID_NUM_LET : ch === ',' || ch === ';' ? MID_NUM : OTHER
}

const NOT_ASCII = /[^\x00-\x7F]/

/** Is every code unit of the text ASCII? */
export function isAscii(text: string): boolean {
  return !NOT_ASCII.test(text)
}

/** Is there a word boundary between text[i - 1] and text[i] (0 < i < length)? Classes of text[i - 2 .. i + 1]. */
function breaks(before: number, a: number, b: number, after: number): boolean {
  if (a === CR && b === LF) return false // WB3
  if (a === CR || a === LF || a === NEWLINE || b === CR || b === LF || b === NEWLINE) return true // WB3a, WB3b
  if (a === SPACE && b === SPACE) return false // WB3d
  if (a === LETTER) {
    if (b === LETTER || b === DIGIT || b === UNDERSCORE) return false // WB5, WB9, WB13a
    if ((b === MID_LETTER || b === MID_NUM_LET) && after === LETTER) return false // WB6
    return true
  }
  if (a === DIGIT) {
    if (b === DIGIT || b === LETTER || b === UNDERSCORE) return false // WB8, WB10, WB13a
    if ((b === MID_NUM || b === MID_NUM_LET) && after === DIGIT) return false // WB12
    return true
  }
  if (a === UNDERSCORE) return !(b === UNDERSCORE || b === LETTER || b === DIGIT) // WB13a, WB13b
  if ((a === MID_LETTER || a === MID_NUM_LET) && before === LETTER && b === LETTER) return false // WB7
  if ((a === MID_NUM || a === MID_NUM_LET) && before === DIGIT && b === DIGIT) return false // WB11
  return true // WB999
}

/**
 * The word segments of an ASCII text (`isAscii`: other text gives wrong segments, unchecked here
 * since callers have just asked), one at a time (a caller that has seen enough stops early), as
 * UAX #29 defines them and ICU gives them for the locales `agreesWithIcu` accepts. Word-like: a
 * segment that starts with a letter or a digit, or joins underscores to something (ICU's rule
 * status for "_" alone is none, for "__" a word).
 */
export function* eachAsciiSegment(text: string): Generator<AsciiSegment> {
  const n = text.length
  if (n === 0) return
  let start = 0
  let before = -1
  let a = CLASS[text.charCodeAt(0)]!
  let b = n > 1 ? CLASS[text.charCodeAt(1)]! : -1
  for (let i = 1; i <= n; i++) {
    const after = i + 1 < n ? CLASS[text.charCodeAt(i + 1)]! : -1
    if (i === n || breaks(before, a, b, after)) {
      const first = CLASS[text.charCodeAt(start)]!
      yield { segment: text.slice(start, i), index: start, isWordLike: first === LETTER || first === DIGIT || (first === UNDERSCORE && i - start > 1) }
      start = i
    }
    before = a
    a = b
    b = after
  }
}

/** Every word segment of an ASCII text (`eachAsciiSegment`, the same precondition). */
export function asciiSegments(text: string): AsciiSegment[] {
  return [...eachAsciiSegment(text)]
}

/**
 * Texts that reach every rule above and their neighbours: each class beside each other, the
 * middle characters between letters, digits and a mix, runs of them, line ends and spaces.
 */
function calibrationTexts(): string[] {
  const samples = ['a', 'Z', '5', '_', ':', '.', "'", ',', ';', ' ', '\t', '\r', '\n', '\v', '"', '-', '!', '(', '@', '\x01']
  const texts: string[] = []
  for (const x of samples) for (const y of samples) texts.push(`a${x}${y}b 1${x}${y}2 _${x}${y}_ ${x}${y}`)
  for (const mid of [':', '.', "'", ',', ';']) {
    texts.push(`a${mid}b a${mid}${mid}b a${mid}1 1${mid}a 1${mid}2 1${mid}${mid}2 ${mid}a${mid} e${mid}g${mid} U${mid}S${mid}A${mid}`)
  }
  texts.push("it's 1,000.50 e.g. foo_bar __init__ a1b2 2nd  \t x\r\ny\r\rz\n\nw _ __ 1_ _1 a__b")
  // Every ASCII character beside letters, digits, underscores, itself and spaces: a locale that
  // gave any one of them another class would show here.
  for (let code = 0; code < 128; code++) {
    const c = String.fromCharCode(code)
    texts.push(`a${c}b 1${c}2 _${c}_ ${c}${c} ${c}a${c}1${c}`)
  }
  return texts
}

/** The answer per segmenter (the worker keeps one per locale); gone with it. */
const agreement = new WeakMap<Intl.Segmenter, boolean>()

/** Does this Intl.Segmenter (word granularity) give what asciiSegments gives, on the calibration texts? Checked once per segmenter. */
export function agreesWithIcu(segmenter: Intl.Segmenter): boolean {
  let agrees = agreement.get(segmenter)
  if (agrees === undefined) {
    agrees = calibrationTexts().every((text) => {
      const expected = [...segmenter.segment(text)]
      const actual = asciiSegments(text)
      return expected.length === actual.length && expected.every((s, k) => s.index === actual[k]!.index && s.segment === actual[k]!.segment && !!s.isWordLike === actual[k]!.isWordLike)
    })
    agreement.set(segmenter, agrees)
  }
  return agrees
}
