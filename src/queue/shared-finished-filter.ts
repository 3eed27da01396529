// QUEUE=bullmq: which strings may have finished at any instance, kept in Redis past the finished
// jobs BullMQ keeps (DEDUPE_TTL_MS, DEDUPE_MAX). The queue's job ids absorb a repeat delivery only
// while its job is queued, running or kept as finished: past that, a late duplicate of a string
// already DONE looked new, ran and was reported a second time (an audit: 80 of 100 strings with
// DEDUPE_MAX 20). As on the default path (finished-filter.ts, the same bits for the same string),
// a string this filter may have seen finish is asked about (GET status) instead of run at once; a
// false positive costs a question, never a string.
//
// Two generations of bits (two Redis strings, SETBIT and GETBIT in scripts, so that instances
// never see half a rotation): when the current one holds `perGeneration` strings it becomes the
// older one and a new one starts. Redis memory is bounded: 2 x filterBits(perGeneration) / 8 bytes
// (4 MiB at the default million per generation, the last one to two million finishes).
import type { Redis } from 'ioredis'
import { filterBits, PROBES, probesOf } from './finished-filter.js'
import { LastScopeHash } from './last-scope-hash.js'
import type { StringRef } from './finished-strings.js'

/** Strings per generation by default, as the default path's filter (finished-filter.ts). */
export const SHARED_FILTER_PER_GENERATION = 1_000_000

/**
 * Set the probes of each string (ARGV: strings per generation, probes per string, then each
 * string's probes) in the current bits KEYS[1]; KEYS[3] counts its strings. Full: it becomes the
 * older bits KEYS[2] (the older ones dropped) and the string goes into a new one.
 */
const ADD = `
local per = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local n = tonumber(redis.call('GET', KEYS[3]) or '0')
for i = 3, #ARGV, k do
  if n >= per then
    if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[2]) else redis.call('DEL', KEYS[2]) end
    n = 0
  end
  for j = i, i + k - 1 do redis.call('SETBIT', KEYS[1], ARGV[j], 1) end
  n = n + 1
end
redis.call('SET', KEYS[3], n)
return n`

/** For each string (ARGV: probes per string, then each string's probes): 1 if every probe is set in KEYS[1] or every one in KEYS[2]. */
const MAY_HAVE = `
local k = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, k do
  local found = 0
  for _, key in ipairs(KEYS) do
    local all = 1
    for j = i, i + k - 1 do
      if redis.call('GETBIT', key, ARGV[j]) == 0 then all = 0 break end
    end
    if all == 1 then found = 1 break end
  end
  out[#out + 1] = found
end
return out`

/** Strings per script call: a group of 500 is one call (5,500 probes). */
const CHUNK = 500

export class SharedFinishedFilter {
  private readonly bits: number
  /** The scope hashed last, and its hash: a group's strings share one, so it is built and hashed once, not per string (as Dedupe does). */
  private readonly scopes = new LastScopeHash()

  /** `keyOf` names the filter's keys in Redis (under the queue's prefix); `perGeneration` 0: none kept. */
  constructor(
    private readonly redis: Redis,
    private readonly keyOf: (name: string) => string,
    private readonly perGeneration = SHARED_FILTER_PER_GENERATION,
  ) {
    this.bits = filterBits(perGeneration)
  }

  /** Redis memory the filter takes at most (bytes): two generations of bits. */
  get maxBytes(): number {
    return this.perGeneration > 0 ? (2 * this.bits) / 8 : 0
  }

  /** These strings (at their revision) finished. */
  async add(strings: ReadonlyArray<StringRef & { revision: number }>): Promise<void> {
    if (this.perGeneration <= 0) return
    for (let i = 0; i < strings.length; i += CHUNK) {
      const probes = strings.slice(i, i + CHUNK).flatMap((s) => this.probes(s))
      if (probes.length) await this.redis.eval(ADD, 3, this.keyOf('finished:bits'), this.keyOf('finished:bits:before'), this.keyOf('finished:count'), this.perGeneration, PROBES, ...probes)
    }
  }

  /** Those of `strings` that may have finished at any instance (within the last one or two generations). */
  async mayHave<T extends StringRef & { revision: number }>(strings: readonly T[]): Promise<Set<T>> {
    const out = new Set<T>()
    if (this.perGeneration <= 0) return out
    for (let i = 0; i < strings.length; i += CHUNK) {
      const chunk = strings.slice(i, i + CHUNK)
      const probes = chunk.flatMap((s) => this.probes(s))
      if (!probes.length) continue
      const found = (await this.redis.eval(MAY_HAVE, 2, this.keyOf('finished:bits'), this.keyOf('finished:bits:before'), PROBES, ...probes)) as number[]
      chunk.forEach((s, j) => {
        if (found[j] === 1) out.add(s)
      })
    }
    return out
  }

  /** A string's probes, hashed as the de-duplication of the default path hashes it (scope, string id, revision). */
  private probes(s: StringRef & { revision: number }): number[] {
    return probesOf(this.scopes.of(s), s.stringId, s.revision, this.bits)
  }
}
