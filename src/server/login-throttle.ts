// Failed operator logins, per client, with exponential back-off: after FREE_FAILURES failures a
// client must wait 1 s, then 2 s, 4 s, ... up to MAX_LOCK_MS before its next attempt is even
// checked (a right password during the wait is refused too, or guessing would go on). A success
// forgets the client. Memory is bounded: at most MAX_CLIENTS clients are remembered, the
// stalest forgotten first.
//
// A client is the peer's address; behind a proxy on a private network, the address the proxy
// forwarded for (clientKey). Such a proxy must set X-Forwarded-For itself rather than append to
// what the client sent, or a guesser can pick a new address per try. An IPv6 client is its /64
// (the least a subscriber is given: counted per address, each of its 2^64 would have its own
// free guesses); an IPv4 one, IPv4-mapped IPv6 included, its address.
import { isIPv6 } from 'node:net'

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
  if (!peer) return forwarded ? addressKey(forwarded) : 'unknown'
  return addressKey(isPrivateAddress(peer) ? forwarded || peer : peer)
}

/** The 8 groups of an IPv6 address, as hex without leading zeros ("::" expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): string[] {
  let a = address
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a)
  if (v4) {
    const [b1, b2, b3, b4] = v4.slice(1).map(Number) as [number, number, number, number]
    a = `${a.slice(0, v4.index)}${((b1 << 8) | b2).toString(16)}:${((b3 << 8) | b4).toString(16)}`
  }
  const [head, tail] = a.split('::') as [string, string | undefined]
  const first = head ? head.split(':') : []
  const last = tail ? tail.split(':') : []
  const zeros = tail === undefined ? [] : new Array<string>(8 - first.length - last.length).fill('0')
  return [...first, ...zeros, ...last].map((g) => parseInt(g, 16).toString(16))
}

/**
 * The throttle's key of one address: an IPv6 address by its /64 ("2001:db8:1:2::/64"), whatever
 * way it is written; an IPv4 address, or an IPv4-mapped IPv6 one (::ffff:a.b.c.d), as it is.
 */
export function addressKey(address: string): string {
  const a = address.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (!isIPv6(a)) return address
  const groups = ipv6Groups(a)
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') return address
  return `${groups.slice(0, 4).join(':')}::/64`
}
