// The benchmark's adversarial strings (issue 17): texts built to make checks slow, the issue's
// own over the default maxTextLength (reported "too long to check") and the same shapes just under
// it (every check reads them), plus strings that make a test plugin spin forever (a plugin-level
// runaway that only the pipeline pool's time budget stops).

/** A string holding this makes the bench's `runaway` plugin spin. */
export const RUNAWAY_MARKER = '\u27f3RUNAWAY\u27f3'

export function adversarialTexts(): Array<{ name: string; text: string }> {
  const mixed = 'word (<b>{0}</b>) %s 12.5 http://a.b/ a@b.cd &Save \\n '
  return [
    { name: '30,000 ( then 30,000 )', text: '('.repeat(30_000) + ')'.repeat(30_000) },
    { name: '<b> 20,000 times', text: '<b>'.repeat(20_000) },
    { name: '"word " 40,000 times', text: 'word '.repeat(40_000) },
    { name: '24,000 ( then 24,000 )', text: '('.repeat(24_000) + ')'.repeat(24_000) },
    { name: '<b> 16,000 times', text: '<b>'.repeat(16_000) },
    { name: '"word " 9,900 times', text: 'word '.repeat(9_900) },
    { name: '{0} 16,000 times', text: '{0}'.repeat(16_000) },
    { name: 'http://a.b/ then 49,000 )', text: `http://a.b/${')'.repeat(49_000)}` },
    { name: '%s 24,000 times', text: '%s'.repeat(24_000) },
    { name: 'mixed tokens, 49 KB', text: mixed.repeat(Math.floor(49_000 / mixed.length)) },
    { name: 'runaway plugin', text: `Save the file ${RUNAWAY_MARKER}` },
    { name: 'runaway plugin, again', text: `Open ${RUNAWAY_MARKER} the file` },
  ]
}

/** The bench's runaway plugin (PLUGINS_DIR): spins forever on a translation holding the marker. */
export const RUNAWAY_PLUGIN = `export default {
  name: 'runaway',
  description: 'Benchmark only: never returns on a translation holding ${RUNAWAY_MARKER}.',
  options: { type: 'object', additionalProperties: false, properties: {} },
  needs: ['translation'],
  create() {
    return { check(item) {
      if ((item.translation ?? '').includes(${JSON.stringify(RUNAWAY_MARKER)})) for (;;) {}
      return []
    } }
  },
}
`
