// A thread of the ingest pool (decode-pool.ts): decodes one webhook body per task. The app
// secrets come once, as workerData; the body comes as transferred bytes, not copied. A body in a
// buffer of the main thread's pool (body-buffers.ts) goes back with the answer, moved too.
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina'
import { decodeBatch, type DecodeResult } from './decode-batch.js'

const { secrets } = workerData as { secrets: string[] }

/** The answer to a pooled body: the decoder's, and the body's memory given back. */
export interface PooledAnswer {
  result: DecodeResult
  memory: ArrayBuffer
}

export default function decode(task: { raw: Uint8Array; signature: string; organization: string; pooled?: boolean; first?: number }): DecodeResult | PooledAnswer {
  const result = decodeBatch(task.raw, task.signature, secrets, task.organization, task.first ?? 0)
  if (!task.pooled) return result
  const memory = task.raw.buffer as ArrayBuffer
  const answer: PooledAnswer = { result, memory }
  return move({ [transferableSymbol]: memory, [valueSymbol]: answer }) as unknown as PooledAnswer
}
