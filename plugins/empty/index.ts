// A translation with nothing visible in it, for a source that has text. Whitespace-only
// translations count as empty by default: NBSP and zero-width characters are what an editor or a
// machine translation leaves when it "translates" to nothing.
import { defineMessages, definePlugin, type FindingInput, type Item } from '../../src/engine/types.js'
import { isBlank } from '../_shared/blank-text.js'

const { messages, report } = defineMessages({
  'empty-translation': { severity: 'error', meaning: 'The translation is empty and the source is not.', text: 'The translation is empty' },
  'blank-translation': { severity: 'error', meaning: 'The translation has only whitespace or invisible characters (with `whitespaceIsEmpty`).', text: 'The translation contains only whitespace or invisible characters' },
})

/** The translation a check sees: the text, or for plural strings the `other` form. */
function translationOf(item: Item): string {
  if (item.translation !== undefined) return item.translation
  return item.plurals?.find((p) => p.plural === 'other')?.text ?? ''
}

export default definePlugin({
  name: 'empty',
  description: 'The translation is not empty (nor only whitespace or invisible characters) when the source has text.',
  options: {
    type: 'object',
    additionalProperties: false,
    properties: {
      whitespaceIsEmpty: {
        type: 'boolean',
        default: true,
        description: 'Treat a translation of only spaces, NBSP, zero-width or directional marks as empty.',
      },
    },
  } as const,
  messages,
  needs: ['translation'],
  create(options) {
    return {
      check(item): FindingInput[] {
        if (isBlank(item.source)) return []
        const text = translationOf(item)
        if (text === '') return [report('empty-translation')]
        if (options.whitespaceIsEmpty && isBlank(text)) {
          return [report('blank-translation', { span: { start: 0, end: text.length } })]
        }
        return []
      },
    }
  },
})
