// Require or forbid a pattern in the source or the translation. Patterns are compiled once, at
// pipeline load, so a bad pattern is a load error, not a finding on every string.
import { definePlugin, type FindingInput, type Language } from '../../src/engine/types.js'
import { localeOf } from '../../src/engine/languages.js'

interface Rule { require?: string; forbid?: string; flags?: string; message?: string }
interface Options { source?: Rule; target?: Rule; message?: string; languages?: string[]; maxFindings: number }

const rule = {
  type: 'object',
  additionalProperties: false,
  properties: {
    require: { type: 'string', description: 'A pattern the text must match.' },
    forbid: { type: 'string', description: 'A pattern the text must not match; every match is reported.' },
    flags: { type: 'string', pattern: '^[imsu]*$', default: 'u', description: 'Regular expression flags.' },
    message: { type: 'string', description: 'The message of a finding; `{match}` stands for the text matched by `forbid`.' },
  },
}

/** Does a language code of the option (`fr`, `pt-BR`) cover the target language? */
function covers(codes: string[], language: Language): boolean {
  const locale = localeOf(language).toLowerCase()
  return codes.some((code) => {
    const want = code.toLowerCase().replace(/_/g, '-')
    return locale === want || locale.startsWith(`${want}-`) || language.id.toLowerCase() === want
  })
}

export default definePlugin<Options>({
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
  },
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
            findings.push({ message: c.message ?? `The ${which} must match /${c.require.source}/` })
          }
          if (c.forbid) {
            let n = 0
            for (const m of text.matchAll(c.forbid)) {
              if (n++ >= options.maxFindings) break
              findings.push({
                message: c.message?.replaceAll('{match}', m[0]) ?? `The ${which} must not match /${c.forbid.source}/: found ${JSON.stringify(m[0])}`,
                span: { start: m.index, end: m.index + m[0].length, in: which },
              })
            }
          }
        }
        return findings
      },
    }
  },
})
