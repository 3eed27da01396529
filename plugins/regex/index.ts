// Require or forbid a pattern in the source or the translation. Patterns are compiled once, at
// pipeline load, so a bad pattern is a load error, not a finding on every string.
import { definePlugin } from '../../src/engine/types.js'

interface Rule { require?: string; forbid?: string; flags?: string; message?: string }
interface Options { source?: Rule; target?: Rule; message?: string }

const rule = {
  type: 'object',
  additionalProperties: false,
  properties: {
    require: { type: 'string', description: 'A pattern the text must match.' },
    forbid: { type: 'string', description: 'A pattern the text must not match.' },
    flags: { type: 'string', pattern: '^[imsu]*$', default: 'u', description: 'Regular expression flags.' },
    message: { type: 'string', description: 'The message of a finding.' },
  },
}

export default definePlugin<Options>({
  name: 'regex',
  description: 'Require or forbid a pattern in the source or the translation.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: { source: rule, target: rule, message: { type: 'string' } },
  },
  needs: ['translation'],
  create(options) {
    const compile = (r: Rule | undefined) => r && {
      require: r.require !== undefined ? new RegExp(r.require, r.flags ?? 'u') : undefined,
      forbid: r.forbid !== undefined ? new RegExp(r.forbid, `${r.flags ?? 'u'}g`.replace(/g+/, 'g')) : undefined,
      message: r.message ?? options.message,
    }
    const checks = { source: compile(options.source), translation: compile(options.target) }
    return {
      check(item) {
        const findings = []
        for (const which of ['source', 'translation'] as const) {
          const c = checks[which]
          const text = which === 'source' ? item.source : item.translation ?? ''
          if (!c) continue
          if (c.require && !c.require.test(text)) {
            findings.push({ message: c.message ?? `The ${which} must match /${c.require.source}/` })
          }
          if (c.forbid) {
            c.forbid.lastIndex = 0
            const m = c.forbid.exec(text)
            if (m) findings.push({ message: c.message ?? `The ${which} must not match /${c.forbid.source}/: found ${JSON.stringify(m[0])}`, span: { start: m.index, end: m.index + m[0].length, in: which } })
          }
        }
        return findings
      },
    }
  },
})
