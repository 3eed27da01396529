// One rule of a glossary: a source term and what a translation of it must (and must not) use.
export interface GlossaryEntry {
  /** The source term; absent for terms forbidden whatever the source says. */
  source?: string
  /** Language code of the source term; any when absent. */
  sourceLanguage?: string
  /** Accepted translations; the translation must contain one of them (none: nothing required). */
  targets: string[]
  /** Terms the translation must not use. */
  forbidden: string[]
  /** Target language code the rule is for; every language when absent. */
  language?: string
  caseSensitive?: boolean
}
