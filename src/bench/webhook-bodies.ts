// Signed webhook batches of a sample project, built the way the emulator's sender builds them
// (its EventWriter, every field of section 2.6, string-major order) so the bench process can be
// the load generator while the emulator only answers API calls. Built one batch at a time.
import { createSampleProject, type SampleProject, type SeedOptions } from '../emulator/sample-project.js'
import { EventWriter, signBody } from '../emulator/webhook-sender.js'
import type { Batch } from './load-generator.js'

export interface BatchSource {
  sample: SampleProject
  /** (string, language) pairs, and batches of `batchSize` of them. */
  pairs: number
  count: number
  batch(index: number): Batch
}

export function batchSource(seed: SeedOptions, options: { appSecret: string; batchSize: number; headerPrefix?: string}): BatchSource {
  const sample = createSampleProject(seed)
  const prefix = options.headerPrefix ?? 'X-Service-'
  const languages = sample.languages
  const pairs = sample.strings.length * languages.length
  const count = Math.ceil(pairs / options.batchSize)
  return {
    sample,
    pairs,
    count,
    batch(index) {
      // A writer per batch: it caches each string's serialized record, which a flood of
      // hundreds of thousands of strings should not keep.
      const writer = new EventWriter(sample, 'string.added')
      const parts: string[] = []
      const end = Math.min(pairs, (index + 1) * options.batchSize)
      for (let k = index * options.batchSize; k < end; k++) {
        const str = sample.strings[Math.floor(k / languages.length)]!
        parts.push(writer.event(str, languages[k % languages.length]!))
      }
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
    },
  }
}

/** A new revision of every string (same texts): a rerun the worker must process again, not absorb as a repeat. */
export function bumpRevisions(sample: SampleProject): void {
  for (const str of sample.strings) str.revision++
}
