// Failed operator logins, per client, with exponential back-off: after FREE_FAILURES failures a
// client must wait 1 s, then 2 s, 4 s, ... up to MAX_LOCK_MS before its next attempt is even
// checked (a right password during the wait is refused too, or guessing would go on). A success
// forgets the client. Memory is bounded: at most MAX_CLIENTS clients are remembered, the
// stalest forgotten first.
//
// A client is the request's address as Koa sees it (ctx.ip, from X-Forwarded-For behind a proxy,
// as app.proxy is on): behind a proxy that appends to that header, the proxy must overwrite it
// for clients that cannot be trusted, or a guesser can pick a new address per try.

export const FREE_FAILURES = 5
export const MAX_LOCK_MS = 15 * 60_000
const MAX_CLIENTS = 10_000
/** A client that has not failed for this long starts afresh. */
const FORGET_AFTER_MS = 60 * 60_000

interface Entry {
  failures: number
  last: number
  lockedUntil: number
}

export class LoginThrottle {
  private readonly clients = new Map<string, Entry>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Milliseconds the client must still wait before an attempt is checked; 0: go ahead. */
  waitMs(client: string): number {
    const e = this.clients.get(client)
    if (!e) return 0
    const t = this.now()
    if (t - e.last > FORGET_AFTER_MS) {
      this.clients.delete(client)
      return 0
    }
    return Math.max(0, e.lockedUntil - t)
  }

  failed(client: string): void {
    const t = this.now()
    const e = this.clients.get(client) ?? { failures: 0, last: t, lockedUntil: 0 }
    this.clients.delete(client)
    e.failures++
    e.last = t
    if (e.failures >= FREE_FAILURES) e.lockedUntil = t + Math.min(MAX_LOCK_MS, 1000 * 2 ** (e.failures - FREE_FAILURES))
    this.clients.set(client, e)
    if (this.clients.size > MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!)
  }

  succeeded(client: string): void {
    this.clients.delete(client)
  }
}
