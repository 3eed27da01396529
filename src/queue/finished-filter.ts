// Which strings may have finished here long ago: a Bloom filter of (scope, string, revision), kept
// well past the de-duplication's memory of finished strings (DEDUPE_TTL_MS, DEDUPE_MAX). A
// duplicate delivery of a string already DONE is no new work, and only the service can tell it
// from a string that came back (platform notes, "A string comes back"); memory decides only
// whether to ask. Past the de-duplication's memory, a string this filter may have seen finish is
// asked about (GET status) instead of run and reported a second time; one it has never seen is run
// at once. A false positive costs a question, never a string.
//
// Two generations of a million strings each, 16 bits per string and 11 probes (about 0.065% false
// positives when both are full, measured): 2 MiB each, allocated on the first finish. When the current one
// is full it becomes the older one and a cleared one starts, so the last one to two million
// finishes are kept. With QUEUE=bullmq the same filter is kept in Redis, shared by the instances
// (shared-finished-filter.ts): the same bits for the same string, from `probesOf`.

const BITS_PER_STRING = 16
export const PROBES = 11

/** Bits of one generation holding `perGeneration` strings: a power of two, so that a probe's place is a mask. */
export function filterBits(perGeneration: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1024, perGeneration * BITS_PER_STRING)))
}

/** The PROBES places of a string in a generation of `bits` bits (filterBits), as FinishedFilter sets them. */
export function probesOf(scope: number, id: number, revision: number, bits: number): number[] {
  const h1 = mix(scope, id, revision, 0x9e3779b1)
  const h2 = mix(scope, id, revision, 0x85ebca6b) | 1
  const out = new Array<number>(PROBES)
  for (let i = 0; i < PROBES; i++) out[i] = (h1 + Math.imul(i, h2)) & (bits - 1)
  return out
}

export class FinishedFilter {
  private current: Uint32Array | undefined
  private older: Uint32Array | undefined
  private count = 0
  private readonly bits: number

  /** `perGeneration` 0: none kept (every string unknown to the de-duplication's memory is new). */
  constructor(private readonly perGeneration = 1_000_000) {
    this.bits = filterBits(perGeneration)
  }

  add(scope: number, id: number, revision: number): void {
    if (this.perGeneration <= 0) return
    if (!this.current) this.current = new Uint32Array(this.bits / 32)
    else if (this.count >= this.perGeneration) {
      const cleared = this.older ?? new Uint32Array(this.bits / 32)
      cleared.fill(0)
      this.older = this.current
      this.current = cleared
      this.count = 0
    }
    const bits = this.current
    const mask = this.bits - 1
    const h1 = mix(scope, id, revision, 0x9e3779b1)
    const h2 = mix(scope, id, revision, 0x85ebca6b) | 1
    for (let i = 0; i < PROBES; i++) {
      const at = (h1 + Math.imul(i, h2)) & mask
      bits[at >>> 5]! |= 1 << (at & 31)
    }
    this.count++
  }

  /** False: it never finished here (within the last one or two generations). True: it may have. */
  mayHave(scope: number, id: number, revision: number): boolean {
    if (!this.current) return false
    const h1 = mix(scope, id, revision, 0x9e3779b1)
    const h2 = mix(scope, id, revision, 0x85ebca6b) | 1
    return within(this.current, this.bits - 1, h1, h2) || (this.older !== undefined && within(this.older, this.bits - 1, h1, h2))
  }
}

function within(bits: Uint32Array, mask: number, h1: number, h2: number): boolean {
  for (let i = 0; i < PROBES; i++) {
    const at = (h1 + Math.imul(i, h2)) & mask
    if ((bits[at >>> 5]! & (1 << (at & 31))) === 0) return false
  }
  return true
}

/** A 32-bit hash of a scope's hash, a string id (a safe integer: both halves count) and a revision. */
function mix(scope: number, id: number, revision: number, seed: number): number {
  let h = Math.imul(scope ^ seed, 0xcc9e2d51) ^ (id >>> 0)
  h = Math.imul(h ^ (h >>> 15), 0x1b873593) ^ Math.floor(id / 4294967296)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) ^ (revision | 0)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  return (h ^ (h >>> 13)) >>> 0
}

/** A 32-bit FNV-1a hash of a scope's key (organization, project, step, language). */
export function scopeHash(key: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return h >>> 0
}
