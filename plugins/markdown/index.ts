// Markdown integrity: the translation keeps the source's inline code exactly, its links' URLs and
// link syntax, and its emphasis markers balanced. Engages only when the source uses Markdown (a
// code span, a link, or a balanced pair of emphasis markers): plain text is left alone.
import { definePlugin, type FindingInput } from '../../src/engine/types.js'
import { multisetDiff } from '../_shared/multiset-diff.js'
import { brokenReferences, inlineMarkdown, runCounts, usesMarkdown } from './inline-markdown.js'

interface Options {
  checkCode: boolean
  checkLinks: boolean
  checkEmphasis: boolean
}

const KIND: Record<string, string> = {
  '*1': 'emphasis markers (*)',
  '_1': 'emphasis markers (_)',
  '*2': 'strong markers (**)',
  '_2': 'strong markers (__)',
  '*3': 'strong emphasis markers (***)',
  '_3': 'strong emphasis markers (___)',
  '~2': 'strikethrough markers (~~)',
}

export default definePlugin<Options>({
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
  },
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
          for (const c of d.missing) findings.push({ message: `Inline code \`${c.code}\` is missing or changed: code stays as in the source`, span: { start: c.start, end: c.end, in: 'source' } })
          for (const c of d.extra) findings.push({ message: `Inline code \`${c.code}\` is not in the source`, span: { start: c.start, end: c.end, in: 'translation' } })
        }

        if (options.checkLinks) {
          if (source.links.some((l) => l.url.startsWith('['))) target.brokenLinks.push(...brokenReferences(translation))
          for (const l of target.brokenLinks) {
            findings.push({ message: `Broken Markdown link: no space may stand between "]" and ${l.url.startsWith('[') ? `its label ${l.url}` : `"(" (${l.url})`}`, span: { start: l.start, end: l.end, in: 'translation' } })
          }
          const d = multisetDiff(source.links, [...target.links, ...target.brokenLinks], (l) => l.url)
          for (const l of d.missing) {
            if (l.url.startsWith('[')) {
              findings.push({ message: `Reference link ${l.url} is missing from the translation, or its label or \`][\` syntax changed`, span: { start: l.start, end: l.end, in: 'source' } })
              continue
            }
            findings.push({ message: `${l.image ? 'Image' : 'Link'} (${l.url}) is missing from the translation, or its URL or \`](\` syntax changed`, span: { start: l.start, end: l.end, in: 'source' } })
          }
          for (const l of d.extra) findings.push({ message: `Link URL (${l.url}) is not in the source`, span: { start: l.start, end: l.end, in: 'translation' } })
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
              findings.push({ message: `Unbalanced ${KIND[kind]}: the translation has ${nt}, the source ${ns}` })
            }
          }
          // `**bold**` and `__bold__` are the same: pairs are compared by strength, as a warning
          // (a translation may rightly drop or move emphasis).
          for (const [length, name] of [[1, 'emphasis'], [2, 'strong'], [3, 'strong emphasis']] as const) {
            const ns = (s.get(`*${length}`) ?? 0) + (s.get(`_${length}`) ?? 0)
            const nt = (t.get(`*${length}`) ?? 0) + (t.get(`_${length}`) ?? 0)
            if (!unbalanced && ns % 2 === 0 && nt % 2 === 0 && ns !== nt) {
              findings.push({ severity: 'warning', message: `The source has ${ns / 2} ${name} pair${ns === 2 ? '' : 's'}, the translation ${nt / 2}` })
            }
          }
          const ns = s.get('~2') ?? 0
          const nt = t.get('~2') ?? 0
          if (!unbalanced && ns % 2 === 0 && nt % 2 === 0 && ns !== nt) {
            findings.push({ severity: 'warning', message: `The source has ${ns / 2} strikethrough pair${ns === 2 ? '' : 's'}, the translation ${nt / 2}` })
          }
        }
        return findings
      },
    }
  },
})
