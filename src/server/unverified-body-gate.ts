// How many webhook bodies are read at once before their signature is checked. A body is read in
// full before it can be verified (into memory up to BODY_MEMORY_LIMIT, then to a file up to
// BODY_LIMIT: large-body.ts), so without a bound anyone who can reach the worker makes it hold that
// much per stalled upload (10 stalled 19 MB uploads held in memory: +160 MB).
// A request past the bound waits, its body unread (a socket, no buffer), for a slot for up to
// `waitMs`: real deliveries that merely arrive together (12 at once in the reporter test) all get
// through, since every refusal costs the service one of its few retries. One that finds no slot
// in time (the slots are held by slow uploads) is answered 503 + Retry-After, its body never read,
// and the connection closed. A slot is held until the handler answers (the signature check is
// part of it).
import type { Middleware } from 'koa'

export const UNVERIFIED_RETRY_AFTER_SECONDS = 5

export interface GateOptions {
  /** How long a request waits for a slot before 503 (ms). */
  waitMs: number
  onRefused?: () => void
}

export function unverifiedBodyGate(max: number, options: GateOptions): Middleware {
  let reading = 0
  const waiting: Array<() => void> = []

  const acquire = (signalClosed: Promise<void>): Promise<boolean> => {
    if (reading < max) {
      reading++
      return Promise.resolve(true)
    }
    return new Promise<boolean>((resolve) => {
      let done = false
      const grant = () => {
        if (done) return
        done = true
        clearTimeout(timer)
        // The slot is handed over by release(): `reading` stays as it is.
        resolve(true)
      }
      const give = (ok: boolean) => {
        if (done) return
        done = true
        clearTimeout(timer)
        const i = waiting.indexOf(grant)
        if (i >= 0) waiting.splice(i, 1)
        resolve(ok)
      }
      const timer = setTimeout(() => give(false), options.waitMs)
      void signalClosed.then(() => give(false))
      waiting.push(grant)
    })
  }

  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else reading--
  }

  return async (ctx, next) => {
    const closed = new Promise<void>((resolve) => ctx.req.once('close', () => resolve()))
    if (!(await acquire(closed))) {
      options.onRefused?.()
      ctx.status = 503
      ctx.set('Retry-After', String(UNVERIFIED_RETRY_AFTER_SECONDS))
      // Close rather than read and discard a body we refused to read.
      ctx.set('Connection', 'close')
      ctx.body = { error: { code: 'busy', message: `${max} webhook bodies are being read already; retry later` } }
      return
    }
    try {
      await next()
    } finally {
      release()
    }
  }
}
