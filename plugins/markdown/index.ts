// Markdown integrity: the translation keeps the source's inline code exactly, its links' URLs and
// link syntax, and its emphasis markers balanced. Engages only when the source uses Markdown (a
// code span, a link, or a balanced pair of emphasis markers): plain text is left alone.
import { defineMessages, definePlugin, type FindingInput } from '../../src/engine/types.js'
import { multisetDiff } from '../_shared/multiset-diff.js'
import { brokenReferences, inlineMarkdown, runCounts, usesMarkdown } from './inline-markdown.js'

const KIND: Record<string, string> = {
  '*1': 'emphasis markers (*)',
  '_1': 'emphasis markers (_)',
  '*2': 'strong markers (**)',
  '_2': 'strong markers (__)',
  '*3': 'strong emphasis markers (***)',
  '_3': 'strong emphasis markers (___)',
  '~2': 'strikethrough markers (~~)',
}

const pairs = (d: { name: string; source: number; translation: number }) => `The source has ${d.source} ${d.name} pair${d.source === 1 ? '' : 's'}, the translation ${d.translation}`
const { messages, report } = defineMessages({
  'missing-code': { severity: 'error', meaning: 'An inline code span of the source is not in the translation exactly (with `checkCode`).', text: (d: { code: string }) => `Inline code \`${d.code}\` is missing or changed: code stays as in the source` },
  'extra-code': { severity: 'error', meaning: 'The translation has an inline code span the source does not have.', text: (d: { code: string }) => `Inline code \`${d.code}\` is not in the source` },
  'broken-link': { severity: 'error', meaning: 'A link of the translation has a space between `]` and `(` or its reference label (with `checkLinks`).', text: (d: { url: string }) => `Broken Markdown link: no space may stand between "]" and ${d.url.startsWith('[') ? `its label ${d.url}` : `"(" (${d.url})`}` },
  'missing-reference-link': { severity: 'error', meaning: 'A reference link `[text][label]` of the source is missing, or its label or syntax changed.', text: (d: { url: string }) => `Reference link ${d.url} is missing from the translation, or its label or \`][\` syntax changed` },
  'missing-link': { severity: 'error', meaning: 'A link or image of the source is missing, or its URL or `](` syntax changed.', text: (d: { url: string; image: boolean }) => `${d.image ? 'Image' : 'Link'} (${d.url}) is missing from the translation, or its URL or \`](\` syntax changed` },
  'extra-link': { severity: 'error', meaning: 'The translation links to a URL the source does not.', text: (d: { url: string }) => `Link URL (${d.url}) is not in the source` },
  'unbalanced-emphasis': { severity: 'error', meaning: 'The translation has an odd number of emphasis, strong or strikethrough markers where the source pairs them (with `checkEmphasis`).', text: (d: { kind: string; source: number; translation: number }) => `Unbalanced ${d.kind}: the translation has ${d.translation}, the source ${d.source}` },
  'emphasis-count': { severity: 'warning', meaning: 'The translation has another number of emphasis, strong or strikethrough pairs than the source (a translation may rightly drop or move emphasis).', text: pairs },
})

export default definePlugin({
  name: 'markdown',
  description: 'Markdown inline code, links and emphasis in the translation match the source.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      checkCode: { type: 'boolean', default: true, description: 'Inline code spans must be identical to the source’s (as a multiset).' },
      checkLinks: { type: 'boolean', default: true, description: 'Links keep their syntax `[text](url)` and the source’s URLs.' },
      checkEmphasis: { type: 'boolean', default: true, description: 'Emphasis, strong and strikethrough markers stay balanced; a different number of pairs than the source is a warning.' },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item) {
        const translation = item.translation ?? ''
        const source = inlineMarkdown(item.source)
        if (!usesMarkdown(source)) return []
        const target = inlineMarkdown(translation)
        const findings: FindingInput[] = []

        if (options.checkCode) {
          const d = multisetDiff(source.code, target.code, (c) => c.code)
          for (const c of d.missing) findings.push(report('missing-code', { code: c.code }, { span: { start: c.start, end: c.end, in: 'source' } }))
          for (const c of d.extra) findings.push(report('extra-code', { code: c.code }, { span: { start: c.start, end: c.end, in: 'translation' } }))
        }

        if (options.checkLinks) {
          if (source.links.some((l) => l.url.startsWith('['))) target.brokenLinks.push(...brokenReferences(translation))
          for (const l of target.brokenLinks) {
            findings.push(report('broken-link', { url: l.url }, { span: { start: l.start, end: l.end, in: 'translation' } }))
          }
          const d = multisetDiff(source.links, [...target.links, ...target.brokenLinks], (l) => l.key)
          for (const l of d.missing) {
            if (l.url.startsWith('[')) {
              findings.push(report('missing-reference-link', { url: l.url }, { span: { start: l.start, end: l.end, in: 'source' } }))
              continue
            }
            findings.push(report('missing-link', { url: l.url, image: !!l.image }, { span: { start: l.start, end: l.end, in: 'source' } }))
          }
          for (const l of d.extra) findings.push(report('extra-link', { url: l.url }, { span: { start: l.start, end: l.end, in: 'translation' } }))
        }

        if (options.checkEmphasis) {
          const s = runCounts(source.runs)
          const t = runCounts(translation ? target.runs : [])
          let unbalanced = false
          for (const kind of Object.keys(KIND)) {
            const ns = s.get(kind) ?? 0
            const nt = t.get(kind) ?? 0
            // A kind the source itself does not pair is not emphasis we can judge.
            if (ns % 2 === 0 && nt % 2 !== 0) {
              unbalanced = true
              findings.push(report('unbalanced-emphasis', { kind: KIND[kind]!, source: ns, translation: nt }))
            }
          }
          // `**bold**` and `__bold__` are the same: pairs are compared by strength, as a warning
          // (a translation may rightly drop or move emphasis).
          for (const [length, name] of [[1, 'emphasis'], [2, 'strong'], [3, 'strong emphasis']] as const) {
            const ns = (s.get(`*${length}`) ?? 0) + (s.get(`_${length}`) ?? 0)
            const nt = (t.get(`*${length}`) ?? 0) + (t.get(`_${length}`) ?? 0)
            if (!unbalanced && ns % 2 === 0 && nt % 2 === 0 && ns !== nt) {
              findings.push(report('emphasis-count', { name, source: ns / 2, translation: nt / 2 }))
            }
          }
          const ns = s.get('~2') ?? 0
          const nt = t.get('~2') ?? 0
          if (!unbalanced && ns % 2 === 0 && nt % 2 === 0 && ns !== nt) {
            findings.push(report('emphasis-count', { name: 'strikethrough', source: ns / 2, translation: nt / 2 }))
          }
        }
        return findings
      },
    }
  },
})
