// Parts of a string that stay the same in every language: placeholders of the common formats,
// markup, URLs, e-mail addresses, file paths and numbers. Checks that compare "the words" of a
// source and a translation remove these first.
// Each pattern is tried from every position: none may scan far from a position where it fails
// (a bracket or `%(` group stops at the next opener, a file name starts only where its word does).
// Brackets: `[[name]]` (wiki links, template tokens), `[NAME]` and a token with a digit or a code
// character and no space (`[0]`, `[user_name]`, `[%s]`) are placeholders. Other bracketed text is
// prose (`[Save]`, `[Beta]`, `(see [file])`): masked, a glossary term in it was not asked of the
// source, and in the translation an approved term went unseen and a forbidden one unreported.
const PATTERNS = [
  /<[^<>]+>/g, // tags
  /&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/gi, // entities
  /\b(?:https?|ftp|file|mailto):\/\/?[^\s<>"]+|\bwww\.[^\s<>"]+/gi, // URLs
  // Only from the start of a run of local-part characters: every later start reaches the same `@`
  // (and retrying from each was quadratic on a long word).
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}.-]+\.\p{L}{2,}/gu, // e-mail
  /\{\{[^{}]*\}\}|\$\{[^{}]*\}|\{[^{}]*\}|%(?:\d+\$)?[-+ #0]*(?:[1-9]\d*)?(?:\.\d+)?(?:hh|h|ll|l|L|z|j|t)?[sdifuxXoeEgGcp@%]|%\([^()]+\)[sdif]|%\w+%|\$\w+\$?|\[\[[^[\]]*\]\]|\[[A-Z][A-Z\d_]+\]|\[[A-Za-z-]*[\d_%$:.#=][\w%$:.#=-]*\]|:[a-z_]+\b/gu, // placeholders
  /(?:[A-Za-z]:)?(?:[\\/][\w.-]+){2,}|\b(?<=(?:^|[^\w-])-*)[\w-]+\.(?:png|jpe?g|gif|svg|pdf|txt|csv|json|xml|html?|js|ts|css|zip|exe|docx?|xlsx?)\b/gi, // paths, file names
  /\p{N}+(?:[.,:/-]\p{N}+)*/gu, // numbers, dates, times
]

/** The text with the non-translatable parts replaced by spaces (offsets are kept). */
export function maskNonTranslatables(text: string): string {
  let out = text
  for (const re of PATTERNS) out = out.replace(re, (m) => ' '.repeat(m.length))
  return out
}
