// A thread of the ingest pool (decode-pool.ts): decodes one webhook body per task. The app
// secrets come once, as workerData; the body comes as transferred bytes, not copied.
import { workerData } from 'piscina'
import { decodeBatch, type DecodeResult } from './decode-batch.js'

const { secrets } = workerData as { secrets: string[] }

export default function decode(task: { raw: Uint8Array; signature: string; organization: string }): DecodeResult {
  return decodeBatch(task.raw, task.signature, secrets, task.organization)
}
