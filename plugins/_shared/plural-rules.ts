// Plural rules of a target language, for the checks that require its plural categories (plurals,
// icu). For a language the runtime has no rules for (Quechua, Māori, Tatar, Latin...), V8 does
// not fail: it quietly answers with the rules of the process's default locale, English one/other,
// or Russian one/few/many/other when the worker runs under LANG=ru_RU. CLDR's answer for such a
// language is its root rules, where every number is `other`.

/** Intl.PluralRules of the locale's language, or undefined when the runtime has none (CLDR root: only `other`). */
export function pluralRulesOf(locale: string, type: Intl.PluralRuleType = 'cardinal'): Intl.PluralRules | undefined {
  try {
    if (Intl.PluralRules.supportedLocalesOf(locale).length === 0) return undefined
    return new Intl.PluralRules(locale, { type })
  } catch {
    // Not a well-formed locale tag.
    return undefined
  }
}
