// Signed webhook batches of a sample project, built the way the emulator's sender builds them
// (its EventWriter, every field of section 2.6, string-major order) so the bench process can be
// the load generator while the emulator only answers API calls. Built one batch at a time.
import { createSampleProject, type SampleProject, type SeedOptions } from '../emulator/sample-project.js'
import { signBody } from '../protocol/webhook-signature.js'
import { EventWriter } from '../emulator/webhook-sender.js'
import type { Batch } from './load-generator.js'

export interface BatchSource {
  sample: SampleProject
  /** (string, language) pairs, and batches of `batchSize` of them. */
  pairs: number
  count: number
  batch(index: number): Batch
}

/**
 * Batches of the sample's strings, every (string, language) pair once. `strings` limits them to
 * the first N strings of the sample (the rest, e.g. extra texts, are sent with `batchOf`).
 */
export function batchSource(seed: SeedOptions, options: { appSecret: string; batchSize: number; headerPrefix?: string; strings?: number }): BatchSource & { batchOf(strings: number[]): Batch } {
  const sample = createSampleProject(seed)
  const prefix = options.headerPrefix ?? 'X-Service-'
  const languages = sample.languages
  const pairs = Math.min(options.strings ?? sample.strings.length, sample.strings.length) * languages.length
  const count = Math.ceil(pairs / options.batchSize)
  const batchOf = (strings: number[]): Batch => {
    // A writer per batch: it caches each string's serialized record, which a flood of
    // hundreds of thousands of strings should not keep.
    const writer = new EventWriter(sample, 'string.added')
    const parts: string[] = []
    for (const k of strings) for (const language of languages) parts.push(writer.event(sample.strings[k]!, language))
    return signed(parts)
  }
  const signed = (parts: string[]): Batch => {
    const body = Buffer.from(`{"events":[${parts.join(',')}]}`)
    return {
      body,
      events: parts.length,
      headers: {
        'User-Agent': 'Service-Webhook',
        'Content-Type': 'application/json',
        [`${prefix}Id`]: sample.organization.id,
        [`${prefix}Domain`]: sample.organization.domain,
        [`${prefix}Signature`]: signBody(body, options.appSecret),
        'X-Module-Key': sample.step.applicationModule.moduleKey,
      },
    }
  }
  return {
    sample,
    pairs,
    count,
    batchOf,
    batch(index) {
      const writer = new EventWriter(sample, 'string.added')
      const parts: string[] = []
      const end = Math.min(pairs, (index + 1) * options.batchSize)
      for (let k = index * options.batchSize; k < end; k++) {
        const str = sample.strings[Math.floor(k / languages.length)]!
        parts.push(writer.event(str, languages[k % languages.length]!))
      }
      return signed(parts)
    },
  }
}

/**
 * The batch as pass `pass` sends it: pass 0 is the batch itself; pass N names organization
 * `<id>-N` in its header and in every event, signed again (the worker refuses a delivery whose
 * events name another organization than its header). The body is kept cut at its organization
 * ids, so a pass costs a copy and an HMAC, not a rebuild of the events.
 */
export function underOtherOrganizations(batch: Batch, organizationId: string, appSecret: string): (pass: number) => Batch {
  const parts = batch.body.toString('utf8').split(`"organizationId":"${organizationId}"`).map((part) => Buffer.from(part))
  return (pass) => {
    if (pass === 0) return batch
    const id = `${organizationId}-${pass}`
    const field = Buffer.from(`"organizationId":"${id}"`)
    const body = Buffer.concat(parts.flatMap((part, k) => (k === 0 ? [part] : [field, part])))
    const signature = Object.keys(batch.headers).find((h) => h.endsWith('-Signature'))!
    const idHeader = signature.replace(/Signature$/, 'Id')
    return { ...batch, body, headers: { ...batch.headers, [idHeader]: id, [signature]: signBody(body, appSecret) } }
  }
}

/** A new revision of every string (same texts): a rerun the worker must process again, not absorb as a repeat. */
export function bumpRevisions(sample: SampleProject): void {
  for (const str of sample.strings) str.revision++
}
