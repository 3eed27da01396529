// Placeholders in the translation match those of the source, as a multiset. Non-positional
// printf arguments (`%s %d`) are also order-sensitive: swapping them breaks the program, so a
// translation that must reorder has to use positions (`%2$d %1$s`).
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { multisetDiff } from '../_shared/multiset-diff.js'
import {
  DEFAULT_PLACEHOLDER_FORMATS,
  PLACEHOLDER_FORMATS,
  displayPlaceholder,
  findPlaceholders,
  type Placeholder,
  type PlaceholderFormat,
} from '../_shared/placeholder-patterns.js'
import { DETECTABLE_FORMATS, detectPlaceholderFormats } from '../_shared/placeholder-detection.js'
import { lonePercents } from './lone-percents.js'

const { messages, report } = defineMessages({
  'missing-placeholder': { severity: 'error', meaning: 'A placeholder of the source is not in the translation (one finding per missing occurrence).', text: (d: { placeholder: string }) => `Missing placeholder ${d.placeholder}` },
  'extra-placeholder': { severity: 'error', meaning: 'The translation has a placeholder the source does not have, or has it more often.', text: (d: { placeholder: string }) => `Placeholder ${d.placeholder} is not in the source` },
  'printf-order': { severity: 'error', meaning: 'Non-positional printf placeholders (`%s %d`) changed order (with `checkOrder`); positional ones (`%1$s`) may be reordered.', text: (d: { source: string; translation: string }) => `printf placeholders changed order (${d.source} → ${d.translation}); use positional ones such as %1$s to reorder` },
  'lone-percent': { severity: 'error', meaning: 'The source writes a literal percent sign as `%%`, and the translation has a lone `%`.', text: 'A lone % in a format string: the source writes a literal percent sign as %%' },
})

/** printf arguments keyed by the argument they consume: explicit `%2$d` or the n-th plain `%d`. */
function printfKeys(list: Placeholder[]): Map<Placeholder, string> {
  const keys = new Map<Placeholder, string>()
  let next = 1
  for (const p of list) keys.set(p, `${p.position ?? next++}:${p.key}`)
  return keys
}

// What check() calls for every string is made once here, not as closures made for each call: V8
// holds a function's optimized code only weakly once no closure of it is alive, so those would be
// compiled again after each full GC.
const isPrintf = (p: Placeholder) => p.format === 'printf'
const notPrintf = (p: Placeholder) => p.format !== 'printf'
const keyOf = (p: Placeholder) => p.key
const order = (list: Placeholder[]) => list.map(keyOf).join(' ')
/** Source spans first, each text's in order. */
const bySpan = (a: FindingInput, b: FindingInput) => (a.span?.in === b.span?.in ? a.span!.start - b.span!.start : a.span?.in === 'source' ? -1 : 1)

function reportDiff(findings: FindingInput[], missing: Placeholder[], extra: Placeholder[]): void {
  for (const p of missing) {
    findings.push(report('missing-placeholder', { placeholder: displayPlaceholder(p) }, { span: { start: p.start, end: p.end, in: 'source' } }))
  }
  for (const p of extra) {
    findings.push(report('extra-placeholder', { placeholder: displayPlaceholder(p) }, { span: { start: p.start, end: p.end, in: 'translation' } }))
  }
}

export default definePlugin({
  name: 'placeholders',
  description: 'Placeholders in the translation match those in the source.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      formats: {
        type: 'array',
        items: { enum: [...PLACEHOLDER_FORMATS] },
        uniqueItems: true,
        default: DEFAULT_PLACEHOLDER_FORMATS,
        description: 'Placeholder syntaxes to recognise.',
      },
      detect: {
        type: 'array',
        items: { enum: [...DETECTABLE_FORMATS] },
        uniqueItems: true,
        default: DETECTABLE_FORMATS,
        description: 'Opt-in syntaxes (not in `formats`) to recognise in a string whose source uses them unambiguously; [] recognises only `formats`.',
      },
      custom: {
        type: 'array',
        items: { type: 'string' },
        default: [],
        description: 'Extra placeholder patterns (regular expressions, Unicode mode).',
      },
      checkOrder: {
        type: 'boolean',
        default: true,
        description: 'Report non-positional printf placeholders (%s, %d) whose order changed.',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    const custom = options.custom.map((source, i) => {
      try {
        return new RegExp(source, 'gu')
      } catch (error) {
        throw new Error(`placeholders: custom[${i}] is not a valid regular expression: ${(error as Error).message}`)
      }
    })
    const candidates = options.detect.filter((f) => !options.formats.includes(f))
    return {
      check(item) {
        const translation = item.translation ?? ''
        const detected = candidates.length ? detectPlaceholderFormats(item.source, candidates) : []
        const formats = detected.length ? [...options.formats, ...detected] : options.formats
        const how = { formats, custom }
        const source = findPlaceholders(item.source, how)
        const target = findPlaceholders(translation, how)
        const findings: FindingInput[] = []
        // `%%` in the source makes it a format string: there, a lone `%` breaks formatting. A
        // source with a lone `%` of its own is not formatted strictly: one more is not judged.
        if (item.source.includes('%%') && lonePercents(item.source, source).length === 0) {
          for (const at of lonePercents(translation, target)) {
            findings.push(report('lone-percent', { span: { start: at, end: at + 1, in: 'translation' } }))
          }
        }
        const other = multisetDiff(source.filter(notPrintf), target.filter(notPrintf), keyOf)
        const sp = source.filter(isPrintf)
        const tp = target.filter(isPrintf)
        const positional = [...sp, ...tp].some((p) => p.position !== undefined)
        if (positional) {
          const sk = printfKeys(sp)
          const tk = printfKeys(tp)
          const d = multisetDiff(sp, tp, (p) => (sk.get(p) ?? tk.get(p))!)
          reportDiff(findings, d.missing, d.extra)
        } else {
          const d = multisetDiff(sp, tp, keyOf)
          reportDiff(findings, d.missing, d.extra)
          if (options.checkOrder && !d.missing.length && !d.extra.length && order(sp) !== order(tp)) {
            findings.push(report('printf-order', { source: order(sp), translation: order(tp) }, { span: { start: tp[0]!.start, end: tp[tp.length - 1]!.end, in: 'translation' } }))
          }
        }
        reportDiff(findings, other.missing, other.extra)
        return findings.sort(bySpan)
      },
    }
  },
})
