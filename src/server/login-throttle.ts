// Failed operator logins, per client, with exponential back-off: after FREE_FAILURES failures a
// client must wait 1 s, then 2 s, 4 s, ... up to MAX_LOCK_MS before its next attempt is even
// checked (a right password during the wait is refused too, or guessing would go on). A success
// forgets the client. Memory is bounded: at most MAX_CLIENTS clients are remembered, the
// stalest forgotten first.
//
// A client is the peer's address; behind a proxy on a private network, the address the proxy
// forwarded for (clientKey). Such a proxy must set X-Forwarded-For itself rather than append to
// what the client sent, or a guesser can pick a new address per try.

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

/** A peer on a private or loopback address is taken for a proxy, whose X-Forwarded-For counts. */
export function isPrivateAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, '')
  if (a === '::1' || a.startsWith('fc') || a.startsWith('fd') || a.startsWith('fe80:')) return true
  const m = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(a)
  if (!m) return false
  const [x, y] = [Number(m[1]), Number(m[2])]
  return x === 127 || x === 10 || (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168)
}

/**
 * Who is guessing: the peer's address, or, when the peer is a proxy on a private network, the
 * client it forwarded for (ctx.ip, from X-Forwarded-For). A client that connects directly from a
 * public address cannot pick a new identity per try by sending that header.
 */
export function clientKey(peer: string | undefined, forwarded: string): string {
  if (!peer) return forwarded || 'unknown'
  return isPrivateAddress(peer) ? forwarded || peer : peer
}
