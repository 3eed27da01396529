// How sure a repeated word is a mistake. An error where it is unambiguous; a warning where the
// language has a grammatical reading of the same two words that the check cannot tell apart:
// German "dass das das Beste ist" and "die die Schule besuchenden Kinder" (article after a
// pronoun), English "what it is is", "log in in the menu" (particle then preposition), Polish
// colloquial "to to jest", Russian "что что" in speech, and names such as "Bora Bora" or
// "Baden Baden" written without the hyphen.

/** Words whose repeat has a grammatical reading without a comma between, per language. */
export const AMBIGUOUS_REPEATS: Record<string, string[]> = {
  en: ['is', 'in', 'on', 'up', 'out', 'off', 'over', 'by'],
  de: ['die', 'der', 'das', 'den', 'dem', 'des'],
  nl: ['die', 'dat'],
  pl: ['to'],
  cs: ['to'],
  ru: ['что', 'кто', 'то'],
  uk: ['що', 'то'],
}

const UPPER = /^\p{Lu}/u
const SENTENCE_END = /[.!?。！？]\s*$/u

export interface RepeatContext {
  /** Lower-cased repeated word. */
  word: string
  /** The two words as written. */
  first: string
  second: string
  /** Up to a few characters of the translation just before the first word. */
  before: string
  /** The first word is the first of the translation. */
  atStart: boolean
  /** Base language code of the translation. */
  base: string
  /** The source repeats some words too: which repeats are meant cannot be told. */
  sourceRepeats: boolean
}

export function repeatSeverity(r: RepeatContext): 'error' | 'warning' {
  if (r.sourceRepeats) return 'warning'
  if (AMBIGUOUS_REPEATS[r.base]?.includes(r.word)) return 'warning'
  // Two capitalized words inside a sentence: a name ("Bora Bora", "Walla Walla").
  const startsSentence = r.atStart || SENTENCE_END.test(r.before)
  if (!startsSentence && UPPER.test(r.first) && UPPER.test(r.second)) return 'warning'
  return 'error'
}
