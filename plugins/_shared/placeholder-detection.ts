// Which opt-in placeholder formats a source reveals. Each of these formats looks like ordinary
// text somewhere (`%50` is Turkish for 50%, "10:30" and "Note:" hold colons, `$USD` is a
// currency, `~a` starts "~approx.", `@` is in e-mail addresses), so none is looked for in every
// string. A source that uses one in a way prose never does switches it on for that string, in
// the source and the translation alike. The rules (one regular expression each, linear):
//
// - `qt`: `%1` (Qt numbers its arguments from 1), not followed by a digit or `$`, not after a digit.
// - `colon`: `:name` of at least two characters after a space, an opening bracket or quote, or the
//   start, and not followed by `:` (emoji shortcodes `:smile:`) or `/`.
// - `dollar-name`: `$name` after a space, bracket, quote or the start, with a lower-case letter or
//   `_` in the name (`$count`, `$user_name`; not `$USD`, `$EUR`), not `$t(`.
// - `entity`: `&name;` (2+ characters) that is not a character reference, not after a letter or
//   digit (`&brandShortName;`; not `&amp;`, not "AT&T;").
// - `lisp`: `~a ~s ~d ~%` … without parameters (not "~5d", about five days), followed by a space,
//   punctuation or the end (not "~approx"); `~%` and `~&` (new line) anywhere. Once on, `~5d` and `~:@r` count too.
// - `at-name`: `@NAME@` with no word character before (not `user@host@`).
import { isCharacterEntity, type PlaceholderFormat } from './placeholder-patterns.js'

interface Detector { format: PlaceholderFormat; needs: string; re: RegExp; accept?(m: RegExpExecArray): boolean }

const DETECTORS: Detector[] = [
  { format: 'qt', needs: '%1', re: /(?<![\p{N}%])%1(?![\d$])/u },
  { format: 'colon', needs: ':', re: /(?<=^|[\s(["'“«])(?<![\p{N}]):[A-Za-z_]\w+(?![:/\w])/u },
  { format: 'dollar-name', needs: '$', re: /(?<=^|[\s(["'“«])\$(?!t\()(?=[A-Z0-9]*[a-z_])[A-Za-z_]\w*(?![\w$({])/u },
  { format: 'entity', needs: '&', re: /(?<![\p{L}\p{N}])&([A-Za-z_][\w.-]+);/gu, accept: (m) => !isCharacterEntity(m[1]!) },
  { format: 'lisp', needs: '~', re: /(?<![~\p{L}\p{N}])~(?:[:@]{0,2}[AaSsDdBbOoXxRrPpCcFfEeGg$](?![\p{L}\p{N}])|[%&])/u },
  { format: 'at-name', needs: '@', re: /(?<![\w@.])@[A-Za-z_][\w-]*@(?![\w.])/u },
]

export const DETECTABLE_FORMATS: readonly PlaceholderFormat[] = DETECTORS.map((d) => d.format)

/** The formats among `candidates` that the source uses unambiguously. */
export function detectPlaceholderFormats(source: string, candidates: readonly PlaceholderFormat[]): PlaceholderFormat[] {
  const out: PlaceholderFormat[] = []
  for (const d of DETECTORS) {
    if (!candidates.includes(d.format) || !source.includes(d.needs)) continue
    if (!d.accept) {
      if (d.re.test(source)) out.push(d.format)
      continue
    }
    d.re.lastIndex = 0
    for (let m = d.re.exec(source); m; m = d.re.exec(source)) {
      if (d.accept(m)) {
        out.push(d.format)
        break
      }
    }
  }
  return out
}
