// The findings the engine makes itself, not a plugin: a text too long to check, and a check that
// failed (threw, rejected, hung, returned something else than findings, or could not start). Each
// has a stable code like the plugins' findings; docs/pipelines.md ("Engine findings") lists them,
// generated from here by scripts/plugin-readmes.mjs (test/docs/findings-docs.test.ts checks it).
import { pluginCodesTable } from './plugin-readme.js'
import { defineMessages } from './types.js'

/**
 * The check id of a failure finding. Conditions count those under it (`errors.engine`); a text too
 * long to check is counted under the check that did not read it instead.
 */
export const ENGINE_CHECK = 'engine'

/** Which check failed (none: the engine's own work between checks), and why, for the message. */
export interface FailureData {
  plugin?: string
  check?: string
  why: string
}

const failed = (d: FailureData) => `${d.plugin === undefined ? 'pipeline' : `plugin "${d.plugin}" (check "${d.check}")`} failed: ${d.why}`

export const { messages: ENGINE_MESSAGES, report: engineFinding } = defineMessages({
  'text-too-long': {
    severity: 'error',
    meaning: 'The source, translation or a plural form is longer than the check\'s `maxTextLength`: the check did not read the string. Counted under that check, with its `severity`.',
    text: (d: { what: string; length: number; check: string; limit: number }) =>
      `Too long to check: the ${d.what} has ${d.length} characters; check "${d.check}" reads at most ${d.limit} (maxTextLength)`,
  },
  'more-findings': {
    severity: ['error', 'warning', 'info'],
    meaning: 'A check reported more findings on one string than `MAX_FINDINGS_PER_CHECK` (20): the 20 most severe are kept (errors, then warnings, then infos, each in the order given) and this one says how many more there were, with the severity of the worst of them. Routing and conditions count all of them; the findings log and `switchyard_findings_total` see the listed ones. Listed under that check.',
    text: (d: { check: string; more: number; kept: number; bySeverity: string }) =>
      `${d.more} more finding${d.more === 1 ? '' : 's'} of check "${d.check}" on this string not listed (${d.bySeverity}; the ${d.kept} most severe are); every one of them counted for routing`,
  },
  'plugin-threw': {
    severity: 'error',
    meaning: 'The check threw or its promise rejected; the message ends with the error.',
    text: failed,
  },
  'plugin-timed-out': {
    severity: 'error',
    meaning: 'The check did not answer within its `timeout` (the plugin\'s `timeoutMs`, else 30 s).',
    text: failed,
  },
  'time-budget-exceeded': {
    severity: 'error',
    meaning: 'The check kept its pipeline thread busy past `CHECK_TIME_BUDGET_MS` without a pause; the thread was stopped.',
    text: failed,
  },
  'plugin-bad-result': {
    severity: 'error',
    meaning: 'The check returned something other than a list of findings (nothing, a finding without a message, a batch of the wrong length), or the plugin has neither `check` nor `checkBatch`.',
    text: failed,
  },
  'settings-invalid': {
    severity: 'error',
    meaning: 'The step\'s saved settings do not pass the pipeline\'s `settings` schema (saved before the pipeline changed it): no check ran on the string. Save the step\'s settings again (docs/settings.md).',
    text: (d: FailureData) => `pipeline not run: the step's saved settings are invalid for it (${d.why}); save the step's settings again`,
  },
  'plugin-not-started': {
    severity: 'error',
    meaning: 'The plugin\'s `create()` failed with the step\'s settings put into its options, or did not finish within the check\'s timeout (a failed one is started again on the next run).',
    text: failed,
  },
})

/** The code of an engine finding. */
export type EngineCode = keyof typeof ENGINE_MESSAGES

/** The codes of the findings that mean "the check failed" (on-error decides where the string goes). */
export type FailureCode = Exclude<EngineCode, 'text-too-long' | 'more-findings'>

/** Where docs/pipelines.md keeps the table of engine codes. */
export const ENGINE_CODES_MARKERS = {
  start: '<!-- engine-codes:start (generated from src/engine/engine-findings.ts by scripts/plugin-readmes.mjs; do not edit by hand) -->',
  end: '<!-- engine-codes:end -->',
} as const

/** The table of engine codes, as docs/pipelines.md shows it. */
export const engineCodesTable = (): string => pluginCodesTable({ messages: ENGINE_MESSAGES })

/** The doc with its table of engine codes current (unchanged when the markers are missing). */
export function updateEngineCodes(doc: string): string {
  const i = doc.indexOf(ENGINE_CODES_MARKERS.start)
  const j = doc.indexOf(ENGINE_CODES_MARKERS.end)
  if (i === -1 || j < i) return doc
  return `${doc.slice(0, i + ENGINE_CODES_MARKERS.start.length)}\n${engineCodesTable()}\n${doc.slice(j)}`
}
