// Require or forbid a pattern in the source or the translation. Patterns are compiled once, at
// pipeline load, so a bad pattern is a load error, not a finding on every string.
import { defineMessages, definePlugin, type FindingInput, type Language, type OptionsOf } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'

const rule = {
  type: 'object',
  additionalProperties: false,
  properties: {
    require: { type: 'string', description: 'A pattern the text must match.' },
    forbid: { type: 'string', description: 'A pattern the text must not match; every match is reported.' },
    flags: { type: 'string', pattern: '^[imsu]*$', default: 'u', description: 'Regular expression flags.' },
    message: { type: 'string', description: 'The message of a finding; `{match}` stands for the text matched by `forbid`.' },
  },
} as const
type Rule = OptionsOf<typeof rule>

const { messages, report } = defineMessages({
  'required-pattern-missing': { severity: 'error', meaning: 'The source or translation does not match its `require` pattern; the message is the rule\'s `message` when it has one.', text: (d: { which: string; pattern: string; message: string | undefined }) => d.message ?? `The ${d.which} must match /${d.pattern}/` },
  'forbidden-pattern': { severity: 'error', meaning: 'The source or translation matches its `forbid` pattern (each match, up to `maxFindings`); the message is the rule\'s `message` when it has one.', text: (d: { which: string; pattern: string; match: string; message: string | undefined }) => d.message?.replaceAll('{match}', () => d.match) ?? `The ${d.which} must not match /${d.pattern}/: found ${JSON.stringify(d.match)}` },
})

/** Does a language code of the option (`fr`, `pt-BR`) cover the target language? */
function covers(codes: string[], language: Language): boolean {
  const locale = localeOf(language).toLowerCase()
  return codes.some((code) => {
    const want = code.toLowerCase().replace(/_/g, '-')
    return locale === want || locale.startsWith(`${want}-`) || language.id.toLowerCase() === want
  })
}

export default definePlugin({
  name: 'regex',
  description: 'Require or forbid a pattern in the source or the translation.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      source: rule,
      target: rule,
      message: { type: 'string', description: 'The message of every finding, unless a rule has its own.' },
      languages: {
        type: 'array', items: { type: 'string', minLength: 1 },
        description: 'Target languages the check applies to (`fr`, `pt-BR`); all when left out.',
      },
      maxFindings: { type: 'integer', minimum: 1, default: 10, description: 'Most `forbid` matches reported per text.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const compile = (r: Rule | undefined, which: string) => {
      if (!r) return undefined
      const make = (key: 'require' | 'forbid', pattern: string | undefined, flags: string) => {
        if (pattern === undefined) return undefined
        try {
          return new RegExp(pattern, flags)
        } catch (error) {
          throw new Error(`regex: ${which}.${key} is not a valid regular expression: ${(error as Error).message}`)
        }
      }
      const flags = r.flags ?? 'u'
      return {
        require: make('require', r.require, flags),
        forbid: make('forbid', r.forbid, `${flags}g`),
        message: r.message ?? options.message,
      }
    }
    const checks = { source: compile(options.source, 'source'), translation: compile(options.target, 'target') }
    return {
      check(item) {
        if (options.languages && !covers(options.languages, item.targetLanguage)) return []
        const findings: FindingInput[] = []
        for (const which of ['source', 'translation'] as const) {
          const c = checks[which]
          const text = which === 'source' ? item.source : item.translation ?? ''
          if (!c) continue
          if (c.require && !c.require.test(text)) {
            findings.push(report('required-pattern-missing', { which, pattern: c.require.source, message: c.message }))
          }
          if (c.forbid) {
            let n = 0
            for (const m of text.matchAll(c.forbid)) {
              if (n++ >= options.maxFindings) break
              findings.push(report('forbidden-pattern', { which, pattern: c.forbid.source, match: m[0], message: c.message }, { span: { start: m.index, end: m.index + m[0].length, in: which } }))
            }
          }
        }
        return findings
      },
    }
  },
})
