// QUEUE=bullmq: several instances share one queue on Redis. The journal's contract holds with
// BullMQ in its place: `append` adds the batch's jobs in one addBulk before the 2XX (Redis keeps
// them), with the de-duplication key as job id so a repeat delivery, to any instance, is absorbed
// while the first is queued or running. A job that finished (kept for DEDUPE_TTL_MS, at most DEDUPE_MAX of them) is replaced by
// the new arrival, marked to be checked with the service first: it may have come back to the step. Past
// that, a filter of the strings finished at any instance, in Redis (shared-finished-filter.ts), has
// an arrival checked too if it may have finished. Any instance's BullMQ
// worker takes jobs and feeds them to its local pipeline, which still groups them per (organization,
// project, step, language) for one PATCH; `done` completes the BullMQ job, `park` fails it so
// BullMQ's own attempts and back-off apply. A killed instance's jobs are taken over by the others
// once their lock expires (BullMQ's stalled-job recovery); a stopping one keeps the locks of those
// it runs and gives back those it has not started (`stopTaking`, `giveBack`).
//
// A repeat is absorbed by the job id only until the status update of the copy running goes out:
// from then on the service may have applied it, and the string been sent back, fixed and delivered
// again (to any instance) before the answer comes. `sending` marks those strings in Redis (one hash
// field each, one write per update) before the request goes out; an arrival of a marked string
// whose copy is still queued or running is kept in Redis (`kept:`, one field a string), and once
// that copy's BullMQ job has ended (completed, held or failed: its update has settled) it goes to
// the queue, checked with the service first, and the mark goes. A sweep with the parked strings
// releases what an instance lost between the two left behind.
//
// Held strings (their organization is forbidden, or has no token) are not failed: BullMQ's attempts
// would run out within minutes and leave them in its failed set while the service still waits.
// `hold` writes each to a Redis hash of its organization's domain (with the output decided, if its
// pipeline ran) and completes the BullMQ job with HELD; `release` puts them back in the queue, in
// turn with the other organizations, once the organization can be reported for. Any instance may
// release (the domains are listed in Redis), so a restart or the loss of the instance that held
// them loses nothing.
//
// Fairness (issue 16): one queue is first in, first out, so one organization's backlog of a
// million strings would keep another's small batches waiting behind it. Organizations, and the
// steps of each, are served in turn by priority instead (start-time fair queueing): each
// (organization, step) has a position on a shared virtual clock (Redis), a batch's strings take the
// next positions of their step but never start before the clock (a newcomer or a step that was
// idle starts now, not in the past), and a string's BullMQ priority is its position in turns of
// FAIR_TURN strings. The clock is the turn of the strings taken last. At each position a step's
// strings are spaced by the number of its organization's steps with strings still waiting there,
// so each organization with strings waiting gets FAIR_TURN strings per turn, shared by its steps,
// oldest first within a step. (Positions taken do not move: where a step's strings were placed
// alone and another step's are placed beside them, the organization gets more while both wait.)
// Each step keeps marks of its runs of positions (start, end, time, spacing, count), which give
// each organization's waiting strings, checked against BACKLOG_ORGANIZATION_SHARE as in the local
// backlog, and when its oldest waiting string was queued. Clock and positions start again from 0
// (a new epoch) when the queue is empty and no batch is on its way to it.
import { randomUUID } from 'node:crypto'
import { DelayedError, Queue, Worker as BullWorker, type Job as BullJob, type Processor, type WorkerOptions } from 'bullmq'
import { Redis, type ChainableCommander } from 'ioredis'
import type { Logger } from '../util/logger.js'
import type { BacklogView } from './backlog.js'
import type { IntakeJournal } from './intake-journal.js'
import { newBatchId } from './journal.js'
import { SharedFinishedFilter } from './shared-finished-filter.js'
import { stepOf, stringKeyOf, type Job } from '../protocol/job.js'

export interface BullmqJournalOptions {
  redisUrl: string
  /** Queue name; instances that share it share the work. */
  name?: string
  /** Jobs one instance works on at once: enough to fill a group of 500 for one PATCH. */
  concurrency: number
  /** Pipeline runs plus reports of one string before it stays failed (parked). */
  attempts: number
  backoffMs: number
  /** How long a job stays locked to an instance that stopped renewing it. */
  lockMs: number
  dedupeTtlMs: number
  /**
   * Finished jobs kept at most (the newest; DEDUPE_MAX), besides for dedupeTtlMs: without it a
   * drain of a deep backlog keeps every string finished in the last dedupeTtlMs in Redis (measured:
   * about 2.3 KB each). Undefined: by age only.
   */
  dedupeMax?: number
  /**
   * Strings per generation of the filter of finished strings in Redis (default
   * SHARED_FILTER_PER_GENERATION; two generations, 16 bits a string): a late duplicate of a string
   * whose finished job is gone is asked about, not run again.
   */
  finishedFilterPerGeneration?: number
  /** Edited strings whose newest revision each of the two revision hashes keeps (default MAX_REVISIONS_KEPT). */
  maxRevisionsKept?: number
  /** Budget of the backlog in Redis (bytes): past it, webhooks get 503. */
  maxBytes?: number
  /** The fraction of it one organization may fill (default 1). */
  organizationShare?: number
  /** How long a batch's writes may take before its webhook gets a 5XX (default APPEND_ANSWER_WAIT_MS; tests shorten it). */
  appendWaitMs?: number
  /** How long a status update waits for its strings' mark in Redis, at most (ms; default MARK_WAIT_MS). */
  markWaitMs?: number
  log: Logger
}

/**
 * The share of Redis's `maxmemory` past which batches get 503 whatever BACKLOG_MAX_MB says: the
 * budget counts strings at an estimated size, and an organization of long texts takes more; the
 * rest is room for holds, finished jobs and the other instances' batches already on their way.
 */
export const REDIS_MEMORY_CEILING = 0.9

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`

/**
 * From the text of `INFO memory`: the memory Redis counts against its `maxmemory` (`used_memory`
 * less `mem_not_counted_for_evict`, its replication and AOF buffers, as Redis's own check does) and
 * `maxmemory` (bytes; 0: no limit), or undefined if it has neither.
 */
export function redisMemoryOf(info: string): { used: number; max: number } | undefined {
  const field = (name: string) => new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]
  const used = field('used_memory')
  const max = field('maxmemory')
  if (used === undefined || max === undefined) return undefined
  return { used: Math.max(0, Number(used) - Number(field('mem_not_counted_for_evict') ?? 0)), max: Number(max) }
}

/** Redis memory a finished job kept for de-duplication takes (measured, docs/deployment.md). */
const REDIS_BYTES_PER_FINISHED_JOB = 2300

/** Redis memory one waiting string takes (BullMQ job hash, id in the wait list), measured: docs/performance.md. */
export const REDIS_BYTES_PER_STRING = 1700
/** Strings of one organization per turn (the priority step). */
export const FAIR_TURN = 100
/** BullMQ's highest priority number (lowest priority); turns past it share it (first in, first out). */
const PRIORITY_LIMIT = 2 ** 21 - 1

/** Marks a step keeps (for its strings waiting and the age of its oldest); past it, the two closest in time merge. */
const FLOW_MARKS = 16
/**
 * Take the next ARGV[3] positions of step ARGV[2] of organization ARGV[1], from the clock (KEYS[2],
 * in turns of ARGV[4]) if it is behind; the time is ARGV[5]. At each position the spacing is the
 * number of the organization's steps with strings still waiting there (this one, and each other
 * whose last string is at or past it), so the organization gets one string per position however
 * many of its steps wait, and a step goes back to spacing 1 where the others' strings end.
 * KEYS[1] holds, per organization, its steps as JSON: { step: { p: next position, q: position of
 * its last string, m: marks } }, a mark [first position, end, time queued, spacing, strings] per
 * run of one spacing the clock has not passed; past FLOW_MARKS the two adjacent marks closest in
 * time merge (those of the same spacing first: their count stays exact), so a mark's time is
 * never later than its strings'. Steps the clock has passed are dropped. KEYS[3], a lease of ARGV[6]
 * ms, keeps the reset (RESET_WHEN_EMPTY) off while the batch is on its way to the queue. Returns
 * the clock's epoch (KEYS[4]) and the runs placed: [epoch, first position, strings, spacing, ...].
 */
const TAKE_POSITIONS = `
redis.call('SET', KEYS[3], '1', 'PX', ARGV[6])
local clock = tonumber(redis.call('GET', KEYS[2]) or '0') * tonumber(ARGV[4])
local out = { tonumber(redis.call('GET', KEYS[4]) or '0') }
local steps = {}
local text = redis.call('HGET', KEYS[1], ARGV[1])
if text then
  local ok, v = pcall(cjson.decode, text)
  if ok and type(v) == 'table' then steps = v end
end
local kept = {}
local others = {}
local at = clock
local marks = {}
for step, s in pairs(steps) do
  if type(s) == 'table' and tonumber(s.p) then
    local q = tonumber(s.q) or (tonumber(s.p) - 1)
    if step == ARGV[2] then
      if tonumber(s.p) > at then at = tonumber(s.p) end
      if type(s.m) == 'table' then
        for _, m in ipairs(s.m) do
          if type(m) == 'table' and tonumber(m[1]) and tonumber(m[2]) and tonumber(m[3]) and tonumber(m[4]) and tonumber(m[5]) and tonumber(m[2]) > clock then marks[#marks + 1] = m end
        end
      end
    elseif q >= clock then
      others[#others + 1] = q
      kept[step] = s
    end
  end
end
table.sort(others)
local x = at
local i = 1
while i <= #others and others[i] < x do i = i + 1 end
local left = tonumber(ARGV[3])
local last = x
local now = tonumber(ARGV[5])
while left > 0 do
  local k = 1 + #others - i + 1
  local n = left
  if i <= #others then
    local fit = math.floor((others[i] - x) / k) + 1
    if fit < n then n = fit end
  end
  out[#out + 1] = x
  out[#out + 1] = n
  out[#out + 1] = k
  marks[#marks + 1] = { x, x + n * k, now, k, n }
  last = x + (n - 1) * k
  x = x + n * k
  left = left - n
  while i <= #others and others[i] < x do i = i + 1 end
end
while #marks > ${FLOW_MARKS} do
  local best, cost = 1, nil
  for j = 1, #marks - 1 do
    local c = marks[j + 1][3] - marks[j][3]
    if marks[j][4] ~= marks[j + 1][4] then c = c + 1e15 end
    if cost == nil or c < cost then best, cost = j, c end
  end
  local a, b = marks[best], marks[best + 1]
  local n = a[5] + b[5]
  marks[best] = { a[1], b[2], a[3], (b[2] - a[1]) / n, n }
  table.remove(marks, best + 1)
end
kept[ARGV[2]] = { p = x, q = last, m = marks }
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(kept))
return out`
/**
 * Move the clock (KEYS[1]) forward to turn ARGV[1] (never back), if the turn is of the clock's
 * epoch ARGV[2] (KEYS[2]; '': a string queued before epochs were kept): a turn taken before a
 * reset would put the new clock far ahead of the positions taken since.
 */
const ADVANCE_CLOCK = `
if ARGV[2] ~= '' and (redis.call('GET', KEYS[2]) or '0') ~= ARGV[2] then return 0 end
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`
/**
 * The newest revision of each string: KEYS[1] the current hash (string key -> revision), KEYS[2]
 * the one before it; ARGV is string key, revision, ..., and last the bound. A field is written
 * only upwards (over what either hash holds). Past the bound the current hash becomes the one
 * before (the older one dropped): the most recent notes are always kept, memory stays within
 * twice the bound, and what is forgotten is only an old copy's chance to be told it is old.
 */
const NOTE_REVISIONS = `
local max = tonumber(ARGV[#ARGV])
if redis.call('HLEN', KEYS[1]) >= max then redis.call('RENAME', KEYS[1], KEYS[2]) end
for i = 1, #ARGV - 1, 2 do
  local rev = tonumber(ARGV[i + 1])
  local known = math.max(tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0'), tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0'))
  if known < rev then redis.call('HSET', KEYS[1], ARGV[i], rev) end
end
return 0`
/** Strings whose newest revision each of the two hashes keeps (NOTE_REVISIONS): about 100 bytes each in Redis. */
export const MAX_REVISIONS_KEPT = 100_000
/** A held organization's hash (KEYS[1]) and its staging hash (KEYS[3]) are empty: its domain (ARGV[1]) leaves the list (KEYS[2]). */
const FORGET_IF_EMPTY = `
if redis.call('HLEN', KEYS[1]) + redis.call('HLEN', KEYS[3]) == 0 then redis.call('HDEL', KEYS[2], ARGV[1]) return 1 end
return 0`
/**
 * Move the fields ARGV of the held hash KEYS[1] to the staging hash KEYS[2], atomically; returns
 * [field, value, ...] of those moved. A hold that writes the same field afterwards writes the held
 * hash again, which a release then leaves alone.
 */
const STAGE = `
local out = {}
for _, f in ipairs(ARGV) do
  local v = redis.call('HGET', KEYS[1], f)
  if v then
    redis.call('HSET', KEYS[2], f, v)
    redis.call('HDEL', KEYS[1], f)
    out[#out + 1] = f
    out[#out + 1] = v
  end
end
return out`
/**
 * Staged strings go back to the held hash KEYS[1] as ARGV [field, value, ...] (each marked to be
 * checked with the service), unless a newer hold wrote them there; off the staging hash KEYS[2].
 */
const UNSTAGE = `
for i = 1, #ARGV, 2 do
  local f = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], f) == 0 then redis.call('HSET', KEYS[1], f, ARGV[i + 1]) end
  redis.call('HDEL', KEYS[2], f)
end
return 0`
/**
 * List domain ARGV[1] as held (hash KEYS[1]): its entry is ARGV[2] (JSON up to `"since":`) followed
 * by the time it was first held, kept from the entry there or else ARGV[3]. ARGV[4] = '1': an
 * entry there stays as it is.
 */
const LIST_HELD = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and ARGV[4] == '1' then return 0 end
local since = old and string.match(old, '"since":(%d+)') or ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. since .. '}')
return 1`
/**
 * Keep arrivals ARGV [field, job JSON, ...] in KEYS[2] behind copies whose status update went out
 * (marked in KEYS[1]); the latest kept answers for an earlier one. Returns 1 for each kept, 0 for
 * each whose mark has gone (its copy ended meanwhile: the arrival is looked at again).
 */
const KEEP_BEHIND_SENT = `
local out = {}
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out`
/**
 * The copies ARGV [field, copy, ...] ended: their marks (KEYS[1]) go, and the arrivals kept behind
 * them (KEYS[2]) are returned as [field, value, ...], left in place until they are queued
 * (FORGET_KEPT). A mark of another copy of the string (one that replaced the copy ended, and sent
 * its own update since) stays, with what is kept behind it: its own end lets go of them.
 */
const END_SENT = `
local out = {}
for i = 1, #ARGV, 2 do
  local f = ARGV[i]
  local mark = redis.call('HGET', KEYS[1], f)
  if mark == ARGV[i + 1] or not mark then
    if mark then redis.call('HDEL', KEYS[1], f) end
    local v = redis.call('HGET', KEYS[2], f)
    if v then
      out[#out + 1] = f
      out[#out + 1] = v
    end
  end
end
return out`
/**
 * Kept arrivals ARGV[2..] [field, value, ...] as a scan of KEYS[2] read them, looked at again: behind
 * a copy queued or running (its job under ARGV[1] .. field) they stay while it is marked (KEYS[1]:
 * its end releases them) and go when it is not (it has not sent its update: it answers for them);
 * behind a copy that finished, or is gone, they are returned [field, value, ...] (their mark goes)
 * to be queued. Atomic: a copy that marks itself meanwhile keeps what arrives after.
 */
const STRANDED_KEPT = `
local out = {}
for i = 2, #ARGV, 2 do
  local f = ARGV[i]
  local job = ARGV[1] .. f
  if redis.call('EXISTS', job) == 1 and not redis.call('HGET', job, 'finishedOn') then
    if redis.call('HEXISTS', KEYS[1], f) == 0 and redis.call('HGET', KEYS[2], f) == ARGV[i + 1] then redis.call('HDEL', KEYS[2], f) end
  else
    redis.call('HDEL', KEYS[1], f)
    local v = redis.call('HGET', KEYS[2], f)
    if v then
      out[#out + 1] = f
      out[#out + 1] = v
    end
  end
end
return out`
/**
 * Marks ARGV[2..] [field, copy, ...] of KEYS[1] as a scan read them, whose copy is over (its job,
 * under ARGV[1] .. field, finished or gone) and with nothing kept behind it (KEYS[2]): they go (an
 * instance lost between a job's end and letting go of its mark left them). Unchanged marks only.
 */
const STALE_MARKS = `
local gone = 0
for i = 2, #ARGV, 2 do
  local f = ARGV[i]
  local job = ARGV[1] .. f
  if (redis.call('EXISTS', job) == 0 or redis.call('HGET', job, 'finishedOn')) and redis.call('HEXISTS', KEYS[2], f) == 0 and redis.call('HGET', KEYS[1], f) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], f)
    gone = gone + 1
  end
end
return gone`
/**
 * Finished copies ARGV [field, copy, ...] removed (in the same transaction): the mark of that very
 * copy (KEYS[1]), which an instance lost before letting go of it left, goes with it, and what was
 * kept behind that mark (KEYS[2]) too: the copy queued in its place answers for it, checked with
 * the service. Returns the fields whose kept arrival went. A mark of another copy stays.
 */
const FORGET_MARKS_OF = `
local out = {}
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    if redis.call('HDEL', KEYS[2], ARGV[i]) == 1 then out[#out + 1] = ARGV[i] end
  end
end
return out`
/** Kept arrivals ARGV [field, value, ...] queued: off KEYS[1], unless another was kept there since. */
const FORGET_KEPT = `
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 0`
/** `work`, or a rejection saying `message` once `ms` pass (the work goes on; its end is not awaited). */
function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
  })
  work.catch(() => undefined)
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** Let go of a lock (KEYS[1]) only if it is still ours (ARGV[1]). */
const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`
/** What a held string's BullMQ job returns: `release` tells it from a copy that finished since. */
export const HELD = 'held'
/** Finished jobs removed per script call when more than DEDUPE_MAX are kept at start (about 15 ms of Redis each). */
const TRIM_CHUNK = 1000
/** Held strings put back in the queue per round trip; also what a release that probes puts back. */
const RELEASE_CHUNK = 500
/** How long close() waits for what is under way to end (releases of held strings, jobs completing; ms): a chunk takes milliseconds. */
const CLOSE_WAIT_MS = 5_000
/**
 * How long a status update waits for its strings' mark in Redis (`sending`) at most: past it the
 * update fails as one the service did not answer, and its strings are held (Redis down must not
 * stop every report for as long as it is down, nor hold a stop for ever).
 */
const MARK_WAIT_MS = 5_000
/**
 * Redis memory one held string takes, counted against BACKLOG_MAX_MB: its JSON in the held hash
 * (1,015 bytes for the bench's strings, 1,356 with a longer text, a context and full language
 * records; measured, docs/performance.md). The BullMQ job its hold completed is one of the
 * DEDUPE_MAX finished jobs, which Redis's maxmemory is sized for apart from the budget
 * (docs/deployment.md), so it is not counted again here.
 */
export const REDIS_BYTES_PER_HELD_STRING = 1400

/**
 * With nothing waiting, delayed or running, and no batch on its way (the lease KEYS[9] that
 * TAKE_POSITIONS sets), clock and positions start again from 0 in a new epoch (KEYS[10]); the
 * positions of versions before steps took turns (KEYS[8]) go too.
 */
const RESET_WHEN_EMPTY = `
if redis.call('EXISTS', KEYS[9]) == 1 then return 0 end
if redis.call('LLEN', KEYS[3]) + redis.call('ZCARD', KEYS[4]) + redis.call('LLEN', KEYS[5]) + redis.call('ZCARD', KEYS[6]) + redis.call('LLEN', KEYS[7]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[8])
redis.call('INCR', KEYS[10])
return 1`
/** How long a batch's positions keep the reset off (ms): far longer than the add that follows them takes. */
const ADD_LEASE_MS = 5000
/** An organization's positions (field ARGV[1] of KEYS[1]) the clock has passed go, unless changed since they were read (ARGV[2]). */
const FORGET_PASSED = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`

/** How long a batch waits for the queue's Redis to be connected before its webhook gets a 5XX. */
export const APPEND_CONNECT_WAIT_MS = 5_000

/**
 * How long a batch's writes may take, once connected, before its webhook gets a 5XX: Redis that
 * stops answering on a connection that looks alive (stopped, a half-open connection, lost while
 * the writes were under way) holds the commands until it answers, for ever (maxRetriesPerRequest:
 * null). Under the service's 30 s, so that it gets an answer that tells it to deliver again.
 */
export const APPEND_ANSWER_WAIT_MS = 20_000

/**
 * A Redis client for BullMQ. BullMQ 6 leaves the client to us (ioredis is an optional peer); its
 * workers block on Redis, so commands must never be given up on (maxRetriesPerRequest: null).
 */
export function redisClient(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false })
}

/** An organization with strings held in Redis. */
export interface HeldDomain {
  domain: string
  /** Its organization id (the fairness positions' and the budget's key). */
  organization: string
  /** When the instance that held it last will try it again (ms since the epoch). */
  retryAt: number
  /** When it was first held (since its domain was last listed). */
  since?: number
}

function parseHeldDomain(text: string): Partial<HeldDomain> | undefined {
  try {
    const v = JSON.parse(text) as Partial<HeldDomain>
    return {
      ...(typeof v.organization === 'string' ? { organization: v.organization } : {}),
      ...(typeof v.retryAt === 'number' ? { retryAt: v.retryAt } : {}),
      ...(typeof v.since === 'number' ? { since: v.since } : {}),
    }
  } catch {
    return undefined
  }
}

/**
 * An organization's steps (TAKE_POSITIONS's JSON) with the clock at position `clock`: its strings
 * waiting (of each mark, those at or past the clock) and when the oldest of them was queued (the
 * earliest mark with strings waiting).
 */
export function flowsWaiting(text: string, clock: number): { waiting: number; oldestAt?: number } {
  let steps: unknown
  try {
    steps = JSON.parse(text)
  } catch {
    return { waiting: 0 }
  }
  if (!steps || typeof steps !== 'object') return { waiting: 0 }
  let waiting = 0
  let oldestAt: number | undefined
  for (const step of Object.values(steps as Record<string, unknown>)) {
    const marks = (step as { m?: unknown } | null)?.m
    if (!Array.isArray(marks)) continue
    for (const mark of marks) {
      if (!Array.isArray(mark)) continue
      const [from, end, at, k, n] = mark as unknown[]
      if (typeof from !== 'number' || typeof end !== 'number' || typeof at !== 'number' || typeof k !== 'number' || typeof n !== 'number' || end <= clock || !(k > 0)) continue
      // Its strings are at from, from + k, ...: those before the clock were taken.
      const left = Math.min(n, Math.max(0, n - Math.ceil((clock - from) / k)))
      if (left <= 0) continue
      waiting += left
      if (oldestAt === undefined || at < oldestAt) oldestAt = at
    }
  }
  return { waiting, ...(oldestAt !== undefined ? { oldestAt } : {}) }
}

/**
 * BullMQ's worker, telling when its handling of a job is over (`handled`): the processor settled,
 * then the job's completion or failure in Redis done, or failed. A completion fails where the job's
 * lock was lost (another instance took it over); BullMQ then emits neither 'completed' nor 'failed'.
 */
class Worker extends BullWorker {
  constructor(
    private readonly handled: (id: string | undefined, token: string) => void,
    name: string,
    processor: Processor,
    opts: WorkerOptions,
  ) {
    super(name, processor, opts)
  }

  override async processJob(...[bullJob, token, fetchNext]: Parameters<BullWorker['processJob']>): ReturnType<BullWorker['processJob']> {
    try {
      return await super.processJob(bullJob, token, fetchNext)
    } finally {
      this.handled(bullJob.id, token)
    }
  }
}

interface Running {
  resolve(value?: string): void
  reject(error: Error): void
  /** The BullMQ job's creation time: tells this copy from a later one of the same string (same id). */
  createdAt: number
  /** The BullMQ job and its lock's token: `delay` moves it back to BullMQ's delayed set. */
  bullJob: BullJob
  token?: string
}

export class BullmqJournal implements IntakeJournal {
  private readonly queue: Queue
  private readonly queueClient: Redis
  private workerClient?: Redis
  private worker?: Worker
  private readonly running = new Map<string, Running>()
  /**
   * Strings whose status update this instance sent (`sending`), and the copy that sent it (its
   * BullMQ job's timestamp: the mark's value): when that job ends, what was kept behind it goes.
   * `settledAt`: when its processor here settled. BullMQ tells of no end for a job given back to
   * wait out a back-off (`delay`), nor for one whose lock was lost (taken over by another instance:
   * its completion here fails): past lockMs after it settled, no end can come (its lock, no longer
   * renewed, has lapsed), and the entry goes (`forgetSentSettled`) rather than stay for the life of
   * the process. A delayed job may run again here after its back-off: it counts as settled then.
   */
  private readonly sent = new Map<string, { copy: string; settledAt?: number }>()
  private sentPrunedAt = 0
  /** Of those, the ones whose job ended, waiting for the next release of kept arrivals (one round trip for them all): [field, copy, ...]. */
  private ended: string[] = []
  private endedTimer?: NodeJS.Immediate
  /**
   * Strings this instance gave back to BullMQ to wait out a back-off (`delay`), per domain: when
   * each may go early (a Retry-After is kept) and when it goes anyway. `bringForward` promotes them.
   */
  private readonly delayed = new Map<string, Map<string, { notBefore: number; due: number }>>()
  private delayedPrunedAt = 0
  private counts = { backlog: 0, failed: 0, held: 0, bytes: 0, at: 0 }
  /**
   * Redis's memory at the last refresh (INFO memory), plus the strings this instance added since at
   * the estimated size; undefined until read, or where INFO is not allowed.
   */
  private memory?: { used: number; max: number }
  /** Whether BACKLOG_MAX_MB against Redis's maxmemory was looked at (once, at the first reading). */
  private memoryChecked = false
  /** Whether a failed INFO was logged (once). */
  private memoryFailureLogged = false
  /** Strings waiting per organization, as the positions and the clock said at the last refresh. */
  private waitingByOrganization = new Map<string, number>()
  /** When each organization's oldest waiting string was queued, at the last refresh. */
  private oldestByOrganization = new Map<string, number>()
  /** Strings held in Redis per organization, and the domains held, at the last refresh. */
  private heldByOrganization: ReadonlyMap<string, number> = new Map()
  /** When each organization with strings held was first held (its earliest domain), at the last refresh. */
  private heldSince = new Map<string, number>()
  /** Strings held in each domain's hash (every domain listed as held), at the last refresh. */
  private heldByDomain: ReadonlyMap<string, number> = new Map()
  /** The domain of each organization id this instance has seen strings of (for the operator's views). */
  private readonly domains = new Map<string, string>()
  private refreshing?: Promise<void>
  /** The highest turn this instance has taken a string of since it last told the clock, and its epoch (-1: none known). */
  private taken = { turn: 0, epoch: -1 }
  private clockTimer?: NodeJS.Timeout
  /** Strings that finished at any instance, past the finished jobs BullMQ keeps (shared-finished-filter.ts). */
  private readonly finishedFilter: SharedFinishedFilter
  /** Strings finished in this tick, noted in the filter together (one script call), and that note. */
  private finishing?: { jobs: Job[]; noted: Promise<void> }
  /** False once stopTaking was called: a job BullMQ still hands out goes back at once. */
  private taking = true
  /**
   * What close() lets end first (up to CLOSE_WAIT_MS): releases of held strings under way (their
   * lock), notes of finished strings, and the jobs of strings reported or held here that BullMQ
   * has not completed yet (their lock: cut off, they would lapse, and another instance would take
   * strings already reported). `completing`: their BullMQ ids, and the token of the run that
   * completes each (a later run of the same id here is not cleared by an earlier one's end).
   */
  private readonly underWay = { releases: new Set<Promise<unknown>>(), notes: 0, completing: new Map<string, string | undefined>() }
  private closing = false

  constructor(private readonly options: BullmqJournalOptions) {
    this.queueClient = redisClient(options.redisUrl)
    this.queue = new Queue(options.name ?? 'switchyard-strings', { connection: this.queueClient })
    this.queue.on('error', (error) => options.log.error({ err: error }, 'bullmq queue error'))
    this.finishedFilter = new SharedFinishedFilter(this.queueClient, (name) => this.queue.toKey(name), options.finishedFilterPerGeneration)
  }

  /** The queue's Redis connected again, shared by every batch waiting for it. */
  private readyAgain: Promise<void> | undefined

  /**
   * Waits up to `waitMs` for the queue's Redis to be connected, else throws. Its commands wait for a
   * reconnection for ever (maxRetriesPerRequest: null, as BullMQ's blocking workers need): a batch
   * appended while Redis is down would leave the webhook unanswered for as long as Redis stays down,
   * past the service's 30 s, instead of the 5XX that tells the service to deliver it again.
   */
  private async connected(waitMs: number): Promise<void> {
    const client = this.queueClient
    if (client.status === 'ready') return
    // One listener for every batch waiting at once, each with its own deadline.
    this.readyAgain ??= new Promise<void>((resolve) => client.once('ready', () => { this.readyAgain = undefined; resolve() }))
    let timer: NodeJS.Timeout | undefined
    const ok = await Promise.race([
      this.readyAgain.then(() => true),
      new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), waitMs) }),
    ]).finally(() => clearTimeout(timer))
    if (!ok) throw new Error(`the queue's Redis (QUEUE_REDIS_URL, or a redis STORE_URL) is not reachable (${client.status}); the batch was not acknowledged and the service delivers it again: check that Redis is up and reachable from this instance`)
  }

  /**
   * Can the queue's Redis take a batch right now (a PING answered within `timeoutMs`)? For /readyz:
   * with QUEUE_REDIS_URL beside another store, the store's own check says nothing of it. Never throws.
   */
  async ping(timeoutMs = 2_000): Promise<boolean> {
    // Commands wait for a reconnection for ever (maxRetriesPerRequest: null): not one while down.
    if (this.queueClient.status !== 'ready') return false
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
      timer.unref()
    })
    const answer = this.queueClient.ping().then((r) => r === 'PONG', () => false)
    return Promise.race([answer, late]).finally(() => clearTimeout(timer))
  }

  newBatchId(): string {
    return newBatchId()
  }

  /** Per organization, its steps' positions (JSON, see TAKE_POSITIONS); not `fair:positions`, which held one number per organization. */
  private get positionsKey(): string {
    return this.queue.toKey('fair:steps')
  }

  private get clockKey(): string {
    return this.queue.toKey('fair:clock')
  }

  /** Set while a batch's positions are taken and it is not yet in the queue: no reset then. */
  private get leaseKey(): string {
    return this.queue.toKey('fair:adding')
  }

  /** How many times clock and positions started again from 0 (a clock update of an earlier epoch is ignored). */
  private get epochKey(): string {
    return this.queue.toKey('fair:epoch')
  }

  /** String key -> when its copy's status update went out (`sending`), until that copy's job ends. */
  private get sendingKey(): string {
    return this.queue.toKey('sending')
  }

  /** String key -> an arrival (job JSON) kept behind the copy whose update went out, until that copy's job ends. */
  private get keptKey(): string {
    return this.queue.toKey('kept')
  }

  /** Domain -> organization id of every organization with held strings (not under `held:`, where a domain could name it). */
  private get heldDomainsKey(): string {
    return this.queue.toKey('held-domains')
  }

  /** String key -> the newest revision that arrived, of strings edited since (revision 2 and up). */
  private get revisionsKey(): string {
    return this.queue.toKey('revisions')
  }

  private get maxRevisionsKept(): number {
    return this.options.maxRevisionsKept ?? MAX_REVISIONS_KEPT
  }

  /** The revisions noted before the current hash filled up (NOTE_REVISIONS). */
  private get olderRevisionsKey(): string {
    return this.queue.toKey('revisions:before')
  }

  /** An organization's held strings: job key -> the job as JSON. */
  private heldKey(domain: string): string {
    return this.queue.toKey(`held:${domain}`)
  }

  /** Each job's priority (its step's next positions on the clock, in turns), and the clock's epoch. */
  private async priorities(jobs: Job[]): Promise<{ priorities: number[]; epoch: number }> {
    const out: number[] = []
    let epoch = 0
    // A batch is one organization's and, mostly, one step's; grouped anyway, in order.
    const byStep = new Map<string, { organization: string; step: string; indexes: number[] }>()
    jobs.forEach((job, i) => {
      const organization = job.organizationId || job.domain
      if (!this.domains.has(organization) && this.domains.size < 10_000) this.domains.set(organization, job.domain)
      const step = stepOf(job)
      const id = `${organization}\n${step}`
      let group = byStep.get(id)
      if (!group) byStep.set(id, (group = { organization, step, indexes: [] }))
      group.indexes.push(i)
    })
    const now = Date.now()
    for (const { organization, step, indexes } of byStep.values()) {
      const answer = ((await this.queueClient.eval(TAKE_POSITIONS, 4, this.positionsKey, this.clockKey, this.leaseKey, this.epochKey, organization, step, indexes.length, FAIR_TURN, now, ADD_LEASE_MS)) as unknown[]).map(Number)
      epoch = answer[0]!
      let j = 0
      for (let r = 1; r + 2 < answer.length; r += 3) {
        const [from, n, k] = [answer[r]!, answer[r + 1]!, answer[r + 2]!]
        for (let s = 0; s < n && j < indexes.length; s++, j++) out[indexes[j]!] = Math.min(PRIORITY_LIMIT, Math.floor((from + s * k) / FAIR_TURN) + 1)
      }
    }
    return { priorities: out, epoch }
  }

  async append(_batchId: string, jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return
    await this.connected(APPEND_CONNECT_WAIT_MS)
    // Writes that end after the deadline still count: the strings are queued and run, and the
    // delivery the 5XX brings again finds them queued (or finished, and checked with the service
    // before it runs): nothing twice, nothing lost.
    const writes = this.noteRevisions(jobs).then(async () => this.add(await this.replaceFinished(jobs)))
    const waitMs = this.options.appendWaitMs ?? APPEND_ANSWER_WAIT_MS
    await withDeadline(writes, waitMs, `the queue's Redis (QUEUE_REDIS_URL, or a redis STORE_URL) did not answer the batch's writes within ${waitMs / 1000} s; the batch was not acknowledged and the service delivers it again: check that Redis is up and answering (not stopped, out of memory or swapping)`)
  }

  /**
   * A source revision past the first says the string was edited: an older copy of it may still be
   * queued, waiting out a back-off, held or running, here or on another instance (each copy is a
   * job of its own, the revision in its id). Kept in Redis before the batch is queued, so that
   * such a copy, once run, is not reported over the newer one's output (`newerArrived`). Strings
   * of revision 1 have nothing older and cost nothing.
   */
  private async noteRevisions(jobs: Job[]): Promise<void> {
    const args: Array<string | number> = []
    for (const job of jobs) if (job.revision > 1) args.push(stringKeyOf(job), job.revision)
    if (args.length) await this.queueClient.eval(NOTE_REVISIONS, 2, this.revisionsKey, this.olderRevisionsKey, ...args, this.maxRevisionsKept)
  }

  /** Those of `jobs` whose string has a newer revision than theirs (noteRevisions). One round trip. */
  async newerArrived(jobs: Job[]): Promise<ReadonlySet<Job>> {
    const newer = new Set<Job>()
    if (jobs.length === 0) return newer
    const keys = jobs.map(stringKeyOf)
    const [now, before] = await Promise.all([this.queueClient.hmget(this.revisionsKey, ...keys), this.queueClient.hmget(this.olderRevisionsKey, ...keys)])
    for (let i = 0; i < jobs.length; i++) if (Math.max(Number(now[i] ?? 0), Number(before[i] ?? 0)) > jobs[i]!.revision) newer.add(jobs[i]!)
    return newer
  }

  /** Add jobs whose ids BullMQ does not hold as finished, each at its organization's next positions. */
  private async add(jobs: Job[]): Promise<void> {
    if (!jobs.length) return
    const keepDone = Math.max(1, Math.ceil(this.options.dedupeTtlMs / 1000))
    const { priorities, epoch } = await this.priorities(jobs)
    await this.queue.addBulk(
      jobs.map((job, i) => ({
        name: 'string',
        // With the clock's epoch its priority is a turn of (`fe`, taken off before the job is run).
        data: { ...job, fe: epoch },
        opts: {
          jobId: job.key,
          priority: priorities[i]!,
          attempts: this.options.attempts,
          backoff: { type: 'exponential', delay: this.options.backoffMs },
          removeOnComplete: this.options.dedupeMax === undefined ? { age: keepDone } : { age: keepDone, count: this.options.dedupeMax },
          removeOnFail: false,
        },
      })),
    )
    this.counts.backlog += jobs.length
    this.counts.bytes += jobs.length * REDIS_BYTES_PER_STRING
    // Until the next reading, at the estimate plus what the texts add beyond a UI string's (their
    // UTF-8 bytes, and a fifth for Redis's own overhead: measured 21.9 KB a job for 18.4 KB of text).
    if (this.memory) for (const job of jobs) this.memory.used += REDIS_BYTES_PER_STRING + 1.2 * (Buffer.byteLength(job.string.text) + Buffer.byteLength(job.string.context))
  }

  /**
   * The jobs to add: one whose id is a finished (completed or failed) BullMQ job replaces it
   * (removed, so addBulk takes the new arrival), marked to be checked with the service before it
   * runs; one whose id is queued or running is left out (BullMQ would absorb it, and it would take
   * positions no string stands for), unless that copy's status update went out: then it is kept
   * behind it (KEEP_BEHIND_SENT) until it ends. One round trip reads the whole batch, one removes
   * its finished jobs (and one more for those kept).
   */
  private async replaceFinished(jobs: Job[]): Promise<Job[]> {
    const pipeline = this.queueClient.pipeline()
    for (const job of jobs) pipeline.hmget(this.queue.toKey(job.key), 'timestamp', 'finishedOn')
    pipeline.hmget(this.sendingKey, ...jobs.map((j) => j.key))
    const answers = (await pipeline.exec()) ?? []
    const marks = (answers[jobs.length]?.[1] as Array<string | null> | undefined) ?? []
    const out: Job[] = []
    const behindSent: Job[] = []
    const finished: string[] = []
    const replaced: string[] = []
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!
      const [timestamp, finishedOn] = (answers[i]?.[1] as Array<string | null> | undefined) ?? []
      if (finishedOn) {
        finished.push(job.key)
        job.recheck = true
        if (marks[i]) replaced.push(job.key)
      } else if (timestamp) {
        if (marks[i]) behindSent.push(job)
        continue
      }
      out.push(job)
    }
    // A mark left on a copy that finished (its instance stopped before letting go of it): this
    // arrival, checked with the service, answers for what was kept behind it. Removed with the jobs.
    await this.removeFinished(finished, (tx) => {
      if (replaced.length) tx.hdel(this.sendingKey, ...replaced).hdel(this.keptKey, ...replaced)
    })
    await this.recheckIfFinishedBefore(out.filter((job) => !job.recheck))
    return behindSent.length ? [...out, ...(await this.keepBehindSent(behindSent))] : out
  }

  /**
   * Remove finished jobs, all at once (Queue.remove each, sent together on the connection: one
   * round trip's wait for the batch, not one a job), then what `alongside` adds about those jobs,
   * in one transaction (with no jobs, nothing is done; with nothing added, no transaction). Returns the answers to what it added.
   */
  private async removeFinished(keys: string[], alongside: (tx: ChainableCommander) => void = () => undefined): Promise<unknown[]> {
    if (keys.length === 0) return []
    await Promise.all(keys.map((key) => this.queue.remove(key)))
    const tx = this.queueClient.multi()
    // An ioredis transaction holds its MULTI from the start: nothing added is still one round trip.
    const empty = tx.length
    alongside(tx)
    if (tx.length === empty) return []
    const answers = await tx.exec()
    if (!answers) throw new Error('Redis did not run the transaction that forgets the marks of finished jobs')
    for (const [error] of answers) if (error) throw error
    return answers.map(([, value]) => value)
  }

  /**
   * Arrivals of strings whose running copy's status update went out: kept in Redis until that copy
   * ends (`releaseKept`). Those whose copy ended meanwhile are looked at again (returned to add).
   */
  private async keepBehindSent(jobs: Job[]): Promise<Job[]> {
    const args: string[] = []
    // With its delivery's id (batchId): two arrivals kept one after the other never read the same.
    for (const job of jobs) {
      const { attempts: _attempts, ...kept } = job
      args.push(job.key, JSON.stringify(kept))
    }
    const answer = (await this.queueClient.eval(KEEP_BEHIND_SENT, 2, this.sendingKey, this.keptKey, ...args)) as number[]
    const again = jobs.filter((_, i) => Number(answer[i]) !== 1)
    return again.length ? this.replaceFinished(again) : []
  }

  /**
   * The status update of these strings goes out now (they are running here): marked in Redis
   * first, so that an arrival of them at any instance from now on is kept, not absorbed. One write.
   */
  async sending(jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return
    const fields: string[] = []
    for (const job of jobs) {
      // The copy: two copies of a string (one finished and replaced, the next running) never
      // clear each other's mark.
      const w = this.running.get(job.key)
      const copy = String(w?.createdAt ?? Date.now())
      fields.push(job.key, copy)
      // Not running here: nothing here ends it, so it is as good as settled.
      this.sent.set(job.key, w ? { copy } : { copy, settledAt: Date.now() })
    }
    this.forgetSentSettled(Date.now())
    const waitMs = this.options.markWaitMs ?? MARK_WAIT_MS
    await withDeadline(this.queueClient.hset(this.sendingKey, ...fields), waitMs, `the queue's Redis did not answer the mark of a status update within ${waitMs / 1000} s; the update was not sent (its strings are held and sent again once Redis answers)`)
  }

  /** A string's BullMQ job ended here (completed, held, failed): if its update was sent, what was kept behind it goes soon. */
  private jobEnded(key: string | undefined): void {
    const sent = key === undefined ? undefined : this.sent.get(key)
    if (sent === undefined) return
    this.sent.delete(key!)
    this.ended.push(key!, sent.copy)
    this.endedTimer ??= setImmediate(() => void this.letGoOfEnded())
  }

  /** The processor of a string's copy settled here (done, held, parked, delayed, given back): see `sent`. */
  private settled(key: string, copy: string): void {
    const now = Date.now()
    const sent = this.sent.get(key)
    if (sent?.copy === copy) sent.settledAt = now
    this.forgetSentSettled(now)
  }

  /**
   * Every lockMs at most: forget the strings of `sent` whose processor settled more than lockMs ago
   * (BullMQ never told of their end here, see `sent`; their marks and what was kept behind them go
   * with another instance's end of the copy or the sweep with the parked strings).
   */
  private forgetSentSettled(now: number): void {
    const lockMs = this.options.lockMs
    if (now - this.sentPrunedAt < lockMs) return
    this.sentPrunedAt = now
    for (const [key, { settledAt }] of this.sent) if (settledAt !== undefined && settledAt <= now - lockMs) this.sent.delete(key)
  }

  /** What was kept behind the jobs that ended since the last time goes (one round trip, and one more if any was kept). */
  private async letGoOfEnded(): Promise<void> {
    if (this.endedTimer) clearImmediate(this.endedTimer)
    this.endedTimer = undefined
    const keys = this.ended
    this.ended = []
    await this.releaseKept(keys).catch((error: unknown) => this.options.log.warn({ err: error, strings: keys.length / 2 }, 'bullmq: could not release the strings kept behind status updates that settled; the sweep with the parked strings does'))
  }

  /**
   * The copies `keys` ([field, copy, ...]) ended: their marks go, and the arrivals kept behind them go to the queue,
   * each checked with the service first (a copy of it queued or running meanwhile answers for it).
   * Returns how many were queued.
   */
  private async releaseKept(keys: string[]): Promise<number> {
    if (keys.length === 0) return 0
    return this.queueKept((await this.queueClient.eval(END_SENT, 2, this.sendingKey, this.keptKey, ...keys)) as string[])
  }

  /** Kept arrivals ([field, value, ...] of the kept hash) into the queue, then off the hash; returns how many were queued. */
  private async queueKept(flat: string[]): Promise<number> {
    if (flat.length === 0) return 0
    const jobs: Job[] = []
    for (let i = 0; i < flat.length; i += 2) {
      try {
        jobs.push({ ...(JSON.parse(flat[i + 1]!) as Job), batchId: '', attempts: 0, recheck: true })
      } catch {
        this.options.log.error({ string: flat[i] }, 'a string kept behind a status update cannot be read back; dropped from Redis')
      }
    }
    const { added } = await this.requeue(jobs)
    await this.queueClient.eval(FORGET_KEPT, 1, this.keptKey, ...flat)
    return added.length
  }

  /**
   * Kept arrivals left behind (the instance that sent their copy's update stopped between its job's
   * end and letting go of them, say): those whose copy finished, or is gone, are queued; those
   * behind a copy under way without its mark are dropped (it answers for them: STRANDED_KEPT).
   * Returns how many were queued.
   */
  private async releaseStrandedKept(): Promise<number> {
    let released = 0
    let cursor = '0'
    do {
      const [next, flat] = await this.queueClient.hscan(this.keptKey, cursor, 'COUNT', RELEASE_CHUNK)
      cursor = next
      if (flat.length) released += await this.queueKept((await this.queueClient.eval(STRANDED_KEPT, 2, this.sendingKey, this.keptKey, this.queue.toKey(''), ...flat)) as string[])
    } while (cursor !== '0')
    // Housekeeping: its failure must not keep the parked strings from their replay.
    await this.forgetStaleMarks().catch((error: unknown) => this.options.log.warn({ err: error }, 'bullmq: could not sweep the marks of status updates whose strings are done; the next sweep does'))
    return released
  }

  /**
   * Marks of copies that are over, with nothing kept behind them (STALE_MARKS): an instance lost
   * between a job's end and letting go of its mark, or whose letting go failed, left them; without
   * this they stayed in the sending hash for good. Swept with the kept arrivals left behind.
   */
  private async forgetStaleMarks(): Promise<void> {
    let cursor = '0'
    do {
      const [next, flat] = await this.queueClient.hscan(this.sendingKey, cursor, 'COUNT', RELEASE_CHUNK)
      cursor = next
      if (flat.length) await this.queueClient.eval(STALE_MARKS, 2, this.sendingKey, this.keptKey, this.queue.toKey(''), ...flat)
    } while (cursor !== '0')
  }

  /**
   * Jobs BullMQ holds nothing of under their id may still have finished, at any instance, before
   * their finished job was removed (DEDUPE_TTL_MS, DEDUPE_MAX): a late duplicate of a string
   * already reported, or a string that came back. Those the filter of finished strings may have
   * seen finish are checked with the service before they run (only NEED_PROCESS runs).
   */
  private async recheckIfFinishedBefore(jobs: Job[]): Promise<void> {
    if (!jobs.length) return
    for (const job of await this.finishedFilter.mayHave(jobs)) job.recheck = true
  }

  /** The job finished (reported, superseded, dropped, absorbed): into the filter of finished strings, with the others of this tick. */
  private noteFinished(job: Job): Promise<void> {
    if (!this.finishing) {
      const batch: { jobs: Job[]; noted: Promise<void> } = { jobs: [], noted: Promise.resolve() }
      this.underWay.notes++
      batch.noted = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => {
          this.finishing = undefined
          return this.finishedFilter.add(batch.jobs)
        })
        .finally(() => void this.underWay.notes--)
      this.finishing = batch
    }
    this.finishing.jobs.push(job)
    return this.finishing.noted
  }

  /** A string's BullMQ job is to complete (its processor settled here): close() lets BullMQ complete it first. */
  private completing(w: Running | undefined, value?: string): void {
    if (!w) return
    if (w.bullJob.id !== undefined) this.underWay.completing.set(w.bullJob.id, w.token)
    w.resolve(value)
  }

  /** Start taking jobs; `take` hands each to the local pipeline. */
  start(take: (job: Job) => void): void {
    const worker = (this.worker = new Worker(
      // Its completion is over, done or failed (its lock lost: no other end is told of, and close()
      // would wait CLOSE_WAIT_MS for it).
      (id, token) => {
        if (id !== undefined && this.underWay.completing.get(id) === token) this.underWay.completing.delete(id)
      },
      this.queue.name,
      (bullJob, token) =>
        new Promise<string | undefined>((resolve, reject) => {
          // `ra`: the attempts of a string given back to wait out a back-off (`delay`), and BullMQ's
          // count of failed runs then: kept only while that count has not moved (a park since, which
          // BullMQ retries, starts afresh, as every other copy does).
          const { fe, ra, ...data } = bullJob.data as Job & { fe?: number; ra?: [number, number] }
          this.tookTurn(bullJob.opts.priority ?? 0, fe)
          const attempts = Array.isArray(ra) && ra[1] === bullJob.attemptsMade && Number.isInteger(ra[0]) ? ra[0] : 0
          const job: Job = { ...data, batchId: String(bullJob.id), attempts }
          // Taken again after its lock lapsed (an instance killed or stuck while running it): that
          // run may have reported it already, so the service is asked first, as for a string that
          // comes back (only NEED_PROCESS runs again).
          // Its update may have gone out with the mark (`sending`) set: its end lets go of what was kept behind it.
          const copy = String(bullJob.timestamp)
          if (bullJob.stalledCounter > 0) {
            job.recheck = true
            this.sent.set(job.key, { copy })
          } else if (this.sent.get(job.key)?.copy === copy) {
            // Taken here again (back from a back-off, say): running, not settled.
            this.sent.get(job.key)!.settledAt = undefined
          }
          this.delayed.get(job.domain)?.delete(job.key)
          // Taken again: an earlier completion of it here is over, or failed (its lock lost).
          this.underWay.completing.delete(bullJob.id!)
          const settled = () => this.settled(job.key, copy)
          this.running.set(job.key, {
            resolve: (value) => (settled(), resolve(value)),
            reject: (error) => (settled(), reject(error)),
            createdAt: bullJob.timestamp,
            bullJob,
            token,
          })
          // Handed out as this instance stopped taking (a fetch under way when the worker paused).
          if (!this.taking) return void this.giveBack([job])
          take(job)
        }),
      {
        connection: (this.workerClient = redisClient(this.options.redisUrl)),
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: Math.max(1000, Math.floor(this.options.lockMs / 2)),
        maxStalledCount: 10,
        autorun: false,
      },
    ))
    // Nothing completes before the finished jobs are within DEDUPE_MAX: BullMQ's own trim by count
    // removes the whole excess in one script as a job completes, which for the million a version
    // without the count (or a larger DEDUPE_MAX) kept would hold Redis for seconds, every instance's
    // commands refused meanwhile.
    void this.trimFinished()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'bullmq: could not trim the finished jobs past DEDUPE_MAX; BullMQ trims them as the next job completes'))
      .then(() => (worker.closing ? undefined : worker.run()))
      .catch((error: unknown) => this.options.log.error({ err: error }, 'bullmq worker stopped'))
    this.worker.on('error', (error) => this.options.log.error({ err: error }, 'bullmq worker error'))
    // Emitted once BullMQ has moved the job (its status update settled before): what arrived
    // behind it is let go only now, so that an arrival meanwhile finds it kept or finished.
    this.worker.on('completed', (bullJob) => {
      this.underWay.completing.delete(bullJob.id!)
      this.jobEnded(bullJob.id)
    })
    this.worker.on('failed', (bullJob, error) => {
      this.jobEnded(bullJob?.id)
      if (bullJob && bullJob.attemptsMade >= (bullJob.opts.attempts ?? 1)) {
        this.options.log.error({ job: bullJob.id, reason: error.message }, 'string parked: BullMQ attempts ran out (kept in the failed set)')
      }
    })
  }

  /** Finished jobs past DEDUPE_MAX, the oldest, removed TRIM_CHUNK at a time. */
  private async trimFinished(): Promise<void> {
    const max = this.options.dedupeMax
    if (max === undefined) return
    const key = this.queue.toKey('completed')
    let removed = 0
    for (;;) {
      const excess = (await this.queueClient.zcard(key)) - max
      if (excess <= 0) break
      const n = Math.min(excess, TRIM_CHUNK)
      // The n-th oldest's finishing time: clean() removes up to n finished at or before it, oldest first.
      const [, finishedAt] = await this.queueClient.zrange(key, n - 1, n - 1, 'WITHSCORES')
      if (finishedAt === undefined) break
      const gone = await this.queue.clean(Date.now() - Number(finishedAt), n, 'completed')
      if (gone.length === 0) break
      removed += gone.length
    }
    if (removed) this.options.log.info({ removed, kept: max }, 'bullmq: finished jobs past DEDUPE_MAX removed before taking strings')
  }

  /**
   * A string of this turn (of the clock's epoch `epoch`) was taken: the clock moves to it, told to
   * Redis at most every 100 ms (the highest turn taken since the last time; Redis never moves it
   * back, and ignores a turn of an epoch before its own). Not filtered by what this instance told
   * before: the clock may have started again from 0 since (the queue was empty).
   */
  private tookTurn(turn: number, epoch?: number): void {
    const e = epoch ?? -1
    if (e > this.taken.epoch || (e === this.taken.epoch && turn > this.taken.turn)) this.taken = { turn, epoch: e }
    else if (e < this.taken.epoch) return
    this.clockTimer ??= setTimeout(() => {
      this.clockTimer = undefined
      const { turn, epoch } = this.taken
      this.taken = { turn: 0, epoch }
      if (turn <= 0) return
      void this.queueClient.eval(ADVANCE_CLOCK, 2, this.clockKey, this.epochKey, turn, epoch < 0 ? '' : String(epoch)).catch((error: unknown) => this.options.log.warn({ err: error }, 'bullmq: moving the fairness clock failed'))
    }, 100)
    this.clockTimer.unref()
  }

  async done(job: Job): Promise<void> {
    const w = this.running.get(job.key)
    this.running.delete(job.key)
    // Its BullMQ job completes once the string is in the filter of finished strings: completed, it
    // may be removed (DEDUPE_MAX) at any time. Not waited for here: the strings of a PATCH, done
    // one after the other, are noted together.
    void this.noteFinished(job)
      .catch((error: unknown) => this.options.log.warn({ err: error, job: job.key }, 'bullmq: a finished string could not be noted in the filter of finished strings; a late duplicate of it may run again'))
      .then(() => this.completing(w))
  }

  /**
   * Strings to be tried again later (their organization's API failed, or their pipeline asked for
   * a retry), given back to BullMQ until `delayMs` has passed (its delayed set), their attempts so
   * far in the job's data: their BullMQ slots go to other strings meanwhile. Kept in the slots, one
   * organization whose API was down (or whose plugin's own upstream was) with QUEUE_CONCURRENCY
   * strings taken kept every other organization's waiting until its attempts ran out (minutes).
   * A newer revision of it arrived meanwhile keeps its output from being reported (newerArrived).
   * `early`: brought forward by `bringForward` once their organization's API answers again, but
   * not before `notBeforeMs` (a Retry-After). Should Redis refuse, a string fails back to BullMQ's
   * own attempts and back-off instead (as a hold that cannot be written does): never rejects.
   */
  async delay(jobs: Job[], delayMs: number, notBeforeMs = 0, early = true): Promise<void> {
    const now = Date.now()
    this.forgetDelayedBefore(now)
    // All at once: a group of 500 is two round trips, not a thousand.
    await Promise.all(jobs.map((job) => this.delayOne(job, now + delayMs, now + notBeforeMs, early)))
  }

  /**
   * Every 10 s at most: forget the delayed strings whose delay is over (they went back by
   * themselves; another instance may have taken them, which this one never hears of), so the map
   * holds what was delayed within about the longest back-off.
   */
  private forgetDelayedBefore(now: number): void {
    if (now - this.delayedPrunedAt < 10_000) return
    this.delayedPrunedAt = now
    for (const [domain, byKey] of this.delayed) {
      for (const [key, at] of byKey) if (at.due <= now) byKey.delete(key)
      if (byKey.size === 0) this.delayed.delete(domain)
    }
  }

  private async delayOne(job: Job, due: number, notBefore: number, early: boolean): Promise<void> {
    const w = this.running.get(job.key)
    if (!w) return
    try {
      await w.bullJob.updateData({ ...w.bullJob.data, ra: [job.attempts, w.bullJob.attemptsMade] })
      await w.bullJob.moveToDelayed(due, w.token)
    } catch (error) {
      this.running.delete(job.key)
      w.reject(error instanceof Error ? error : new Error(String(error)))
      return
    }
    this.running.delete(job.key)
    if (early) {
      let byKey = this.delayed.get(job.domain)
      if (!byKey) this.delayed.set(job.domain, (byKey = new Map()))
      byKey.set(job.key, { notBefore, due })
    }
    // BullMQ leaves a job it was told is delayed as it is: neither completed nor failed.
    w.reject(new DelayedError())
    // It may come back here after its back-off and end here: its update's record stays until
    // lockMs past that (`forgetSentSettled`), not from now.
    const sent = this.sent.get(job.key)
    if (sent?.settledAt !== undefined) sent.settledAt = Math.max(sent.settledAt, due)
  }

  /** The organization's API answered: its strings waiting out a back-off here (`delay`) go now. */
  bringForward(domain: string): void {
    const byKey = this.delayed.get(domain)
    if (!byKey) return
    const now = Date.now()
    for (const [key, at] of byKey) {
      if (at.notBefore > now && at.due > now) continue
      byKey.delete(key)
      if (at.due > now) void this.promote(key)
    }
    if (byKey.size === 0) this.delayed.delete(domain)
  }

  /** A delayed string to the queue now; one no longer delayed (taken, removed) is left as it is. */
  private async promote(key: string): Promise<void> {
    try {
      const job = await this.queue.getJob(key)
      if (job && (await job.isDelayed())) await job.promote()
    } catch (error) {
      // Taken by an instance meanwhile, or Redis busy: it goes when its delay is over.
      this.options.log.debug({ err: error, job: key }, 'bullmq: a delayed string could not be brought forward')
    }
  }

  async park(job: Job, reason: string): Promise<void> {
    const w = this.running.get(job.key)
    this.running.delete(job.key)
    w?.reject(new Error(reason))
  }

  /**
   * Strings whose organization can't be reported for now: kept in Redis, one hash per domain (a
   * later copy of a string replaces the earlier), then their BullMQ jobs complete as HELD. The
   * domain is listed with `retryAt`, when the instance holding it will try it again (ms since the
   * epoch): another instance releases it only well after that (the holder is gone). Written
   * before the jobs complete: an instance lost in between leaves a job that BullMQ hands to another
   * instance, which holds it again (the same field) or runs it. Should Redis refuse the write (out
   * of memory, say), the jobs fail back to BullMQ, whose retries and stalled-job recovery keep
   * them: never rejects.
   */
  async hold(jobs: Job[], retryAt: number): Promise<void> {
    let failed: Error | undefined
    try {
      await this.keepHeld(jobs, retryAt, false)
    } catch (error) {
      failed = error instanceof Error ? error : new Error(String(error))
      this.options.log.warn({ err: failed, strings: jobs.length }, 'could not keep held strings in Redis; they go back to BullMQ\'s retries')
    }
    for (const job of jobs) {
      const w = this.running.get(job.key)
      this.running.delete(job.key)
      if (failed) w?.reject(failed)
      else this.completing(w, HELD)
    }
  }

  /**
   * Write jobs to their domains' held hashes and list the domains (one transaction); `keepRetryAt`:
   * a domain already listed keeps its entry (a live hold's time to try again).
   */
  private async keepHeld(jobs: Job[], retryAt: number, keepRetryAt: boolean): Promise<void> {
    if (jobs.length === 0) return
    const tx = this.queueClient.multi()
    const now = Date.now()
    const byDomain = new Map<string, string[]>()
    for (const job of jobs) {
      let fields = byDomain.get(job.domain)
      if (!fields) {
        byDomain.set(job.domain, (fields = []))
        const entry = JSON.stringify({ domain: job.domain, organization: job.organizationId || job.domain, retryAt } satisfies HeldDomain)
        tx.eval(LIST_HELD, 1, this.heldDomainsKey, job.domain, `${entry.slice(0, -1)},"since":`, now, keepRetryAt ? '1' : '0')
      }
      const { batchId: _batchId, attempts: _attempts, ...kept } = job
      // Which BullMQ copy this hold completes (`hc`): a release that finds that copy still running
      // knows it is this hold under way, not a later delivery that ran meanwhile.
      const createdAt = this.running.get(job.key)?.createdAt
      fields.push(job.key, JSON.stringify(createdAt === undefined ? kept : { ...kept, hc: createdAt }))
    }
    for (const [domain, fields] of byDomain) tx.hset(this.heldKey(domain), ...fields)
    const answers = await tx.exec()
    const failed = answers?.find(([error]) => error)?.[0]
    if (!answers || failed) throw failed ?? new Error('Redis did not run the transaction that holds the strings')
  }

  /**
   * At a start: the strings parked in BullMQ's failed set (their attempts ran out, or nothing could
   * run them) go back to the queue, each checked with the service before it runs, as the local
   * journal replays its parked strings. A page at a time, through the held hashes: written there
   * (a domain held meanwhile keeps its entry), removed from the failed set, then those strings
   * alone released; a process lost midway leaves them in a hash, which the sweep of held strings
   * releases. Returns how many.
   */
  async replayParked(): Promise<number> {
    // Strings kept behind a status update whose instance let go of neither go now too.
    let replayed = await this.releaseStrandedKept()
    // Those parked before this start only (oldest first): strings parked again meanwhile, here or
    // by another instance, wait for the next start. (Up to its millisecond: one parked just before
    // the call may carry the same time.)
    const startedAt = Date.now()
    for (;;) {
      const page = await this.queue.getJobs(['failed'], 0, RELEASE_CHUNK - 1, true)
      const failed = page.filter((b) => (b.finishedOn ?? 0) <= startedAt)
      if (!failed.length) break
      const jobs = failed.map((b) => {
        const { fe: _epoch, ra: _attempts, ...data } = b.data as Job & { fe?: number; ra?: unknown }
        return { ...data, batchId: '', attempts: 0, recheck: true }
      })
      await this.keepHeld(jobs, 0, true)
      const removed = await Promise.all(failed.map((b) => b.remove().then(() => true, () => false)))
      const byDomain = new Map<string, string[]>()
      for (const job of jobs) byDomain.set(job.domain, [...(byDomain.get(job.domain) ?? []), job.key])
      for (const [domain, keys] of byDomain) replayed += await this.release(domain, { only: keys })
      // Another instance took them meanwhile (or removing fails), or the page reached this start:
      // leave the rest to the next start.
      if (!removed.some(Boolean) || failed.length < page.length) break
    }
    if (replayed) this.options.log.info({ strings: replayed }, 'strings parked in BullMQ are back in the queue')
    return replayed
  }

  /** Organizations with strings held in Redis (by any instance), by domain. */
  async heldDomains(): Promise<HeldDomain[]> {
    const all = await this.queueClient.hgetall(this.heldDomainsKey)
    return Object.entries(all)
      .map(([domain, text]) => ({ domain, organization: domain, retryAt: 0, ...(parseHeldDomain(text) ?? {}) }))
      .sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0))
  }

  /** Did the last refresh of `backlog()` find strings of this domain held in Redis? */
  holdsInRedis(domain: string): boolean {
    return this.heldByDomain.has(domain)
  }

  /** Strings held in Redis (by any instance) per domain listed as held, at the last refresh of `backlog()`. */
  heldPerDomain(): ReadonlyMap<string, number> {
    return this.heldByDomain
  }

  /**
   * Put an organization's held strings back in the queue; returns how many went. A chunk at a
   * time: moved atomically to a staging hash (a hold of the same string meanwhile writes the held
   * hash again and is left for later), queued, then deleted from the staging hash; a string whose
   * copy is still running goes back to the held hash for a later release. `probe`: about a chunk
   * only (the rest follows once a report for the organization goes through); `only`: those
   * strings alone. One instance at a time per domain (a lock in Redis; another
   * instance's release meanwhile returns 0); what a lost process left staged goes first. Once
   * close() has begun, none starts, and one under way stops after its chunk (the rest stays held
   * for another instance), so that close() can wait for it to let go of its lock.
   */
  async release(domain: string, o: { probe?: boolean; only?: string[] } = {}): Promise<number> {
    if (this.closing) return 0
    const releasing = this.releaseLocked(domain, o)
    this.underWay.releases.add(releasing)
    try {
      return await releasing
    } finally {
      this.underWay.releases.delete(releasing)
    }
  }

  private async releaseLocked(domain: string, o: { probe?: boolean; only?: string[] }): Promise<number> {
    const lock = `${this.heldKey(domain)}:releasing`
    const token = randomUUID()
    if ((await this.queueClient.set(lock, token, 'PX', 60_000, 'NX')) !== 'OK') return 0
    const limit = o.probe ? RELEASE_CHUNK : Number.POSITIVE_INFINITY
    let released = 0
    try {
      const left = await this.queueClient.hgetall(this.stagingKey(domain))
      if (Object.keys(left).length) released += await this.requeueStaged(domain, Object.entries(left).flat())
      if (o.only) {
        for (let i = 0; i < o.only.length && released < limit && !this.closing; i += RELEASE_CHUNK) released += await this.stageAndRequeue(domain, o.only.slice(i, i + RELEASE_CHUNK), lock)
      } else {
        let cursor = '0'
        do {
          const [next, flat] = await this.queueClient.hscan(this.heldKey(domain), cursor, 'COUNT', RELEASE_CHUNK)
          cursor = next
          const fields = flat.filter((_, i) => i % 2 === 0)
          if (fields.length) released += await this.stageAndRequeue(domain, fields, lock)
        } while (cursor !== '0' && released < limit && !this.closing)
      }
      await this.queueClient.eval(FORGET_IF_EMPTY, 3, this.heldKey(domain), this.heldDomainsKey, this.stagingKey(domain), domain)
    } finally {
      await this.queueClient.eval(UNLOCK, 1, lock, token).catch(() => undefined)
    }
    if (released) this.options.log.info({ domain, strings: released }, 'held strings are back in the queue')
    return released
  }

  private stagingKey(domain: string): string {
    return `${this.heldKey(domain)}:staging`
  }

  private async stageAndRequeue(domain: string, fields: string[], lock: string): Promise<number> {
    const moved = (await this.queueClient.eval(STAGE, 2, this.heldKey(domain), this.stagingKey(domain), ...fields)) as string[]
    const n = moved.length ? await this.requeueStaged(domain, moved) : 0
    await this.queueClient.pexpire(lock, 60_000)
    return n
  }

  /** Staged strings ([field, value, ...]) into the queue; those a running copy stands for go back. */
  private async requeueStaged(domain: string, flat: string[]): Promise<number> {
    const jobs: Job[] = []
    const unreadable: string[] = []
    /** The BullMQ copy each hold completes, where it was recorded. */
    const holdingCopy = new Map<string, number>()
    for (let i = 0; i < flat.length; i += 2) {
      try {
        const { hc, ...job } = JSON.parse(flat[i + 1]!) as Job & { hc?: number }
        if (hc !== undefined) holdingCopy.set(job.key, hc)
        jobs.push({ ...job, batchId: '', attempts: 0 })
      } catch {
        unreadable.push(flat[i]!)
      }
    }
    if (unreadable.length) this.options.log.error({ domain, strings: unreadable }, 'held strings that cannot be read back were dropped from Redis')
    const { added, running } = await this.requeue(jobs)
    const staging = this.stagingKey(domain)
    // Still running: the copy whose hold wrote this (about to complete as held) goes back as it was;
    // another copy ran meanwhile (it may be reported before this one is released): checked first then.
    const back = jobs.filter((j) => running.has(j.key)).flatMap((j) => {
      const { batchId: _batchId, attempts: _attempts, ...kept } = j
      const createdAt = running.get(j.key)
      const own = createdAt !== undefined && holdingCopy.get(j.key) === createdAt
      return [j.key, JSON.stringify(own ? { ...kept, hc: createdAt } : { ...kept, recheck: true })]
    })
    if (back.length) await this.queueClient.eval(UNSTAGE, 2, this.heldKey(domain), staging, ...back)
    const done = [...added, ...unreadable]
    if (done.length) await this.queueClient.hdel(staging, ...done)
    return added.length
  }

  /**
   * Held jobs back into the queue. Under its id BullMQ has the job the hold completed (removed, so
   * the job is added again as it was held), a copy still waiting or running (left: it may be a
   * hold under way, so the string is kept for a later release), a copy that finished since
   * (removed; the job is checked with the service before it runs, as any string that comes back),
   * or nothing (expired: added). A finished copy's mark (`sending`) goes with its job (FORGET_MARKS_OF).
   * Returns the keys added and those left, with their copy's creation time.
   */
  private async requeue(jobs: Job[]): Promise<{ added: string[]; running: Map<string, number> }> {
    if (!jobs.length) return { added: [], running: new Map() }
    const pipeline = this.queueClient.pipeline()
    for (const job of jobs) pipeline.hmget(this.queue.toKey(job.key), 'timestamp', 'finishedOn', 'returnvalue')
    const answers = (await pipeline.exec()) ?? []
    const add: Job[] = []
    const running = new Map<string, number>()
    /** Finished copies to remove: [field, copy (its timestamp), ...]. */
    const finished: string[] = []
    /** Nothing under their id: expired, or removed past DEDUPE_MAX. */
    const gone: Job[] = []
    jobs.forEach((job, i) => {
      const [error, value] = answers[i] ?? [new Error('no answer')]
      if (error) throw error
      const [timestamp, finishedOn, returnvalue] = value as Array<string | null>
      if (timestamp && !finishedOn) {
        running.set(job.key, Number(timestamp))
        return
      }
      if (finishedOn) {
        finished.push(job.key, timestamp ?? '')
        if (returnvalue !== JSON.stringify(HELD)) job.recheck = true
      } else gone.push(job)
      add.push(job)
    })
    // The mark a lost instance left on a finished copy goes with its job: left, it kept every
    // arrival of the string behind the copy queued here until the sweep with the parked strings.
    const [keptWent] = await this.removeFinished(finished.filter((_, i) => i % 2 === 0), (tx) => void tx.eval(FORGET_MARKS_OF, 2, this.sendingKey, this.keptKey, ...finished))
    const answersFor = new Set((keptWent as string[] | undefined) ?? [])
    for (const job of add) if (answersFor.has(job.key)) job.recheck = true
    // A copy that ran while these were held may have finished and been removed since.
    await this.recheckIfFinishedBefore(gone.filter((job) => !job.recheck))
    await this.add(add)
    return { added: add.map((j) => j.key), running }
  }

  /**
   * Why a batch can't be taken now: Redis holds the backlog, in memory, so the budget is Redis
   * memory, estimated from the strings waiting (REDIS_BYTES_PER_STRING, measured: docs/performance.md).
   * The counts are at most 250 ms old; refreshed in the background.
   */
  refuse(bytes: number, organization?: string): string | undefined {
    void this.backlog().catch(() => undefined)
    const used = this.counts.bytes
    const max = this.options.maxBytes ?? Infinity
    const memory = this.memory
    if (memory && memory.max > 0 && memory.used + bytes > memory.max * REDIS_MEMORY_CEILING) {
      // With strings waiting, the ceiling keeps room for them to drain through (holds, finished
      // jobs). With none, nothing the worker does frees memory: a batch is refused only where
      // Redis would refuse it itself, and the line names what else fills it.
      if (this.counts.backlog > 0) {
        return `Redis is nearly full (${mb(memory.used)} of its maxmemory ${mb(memory.max)}, ${this.counts.backlog} strings waiting; batches are refused past ${REDIS_MEMORY_CEILING * 100}%): strings are not being reported as fast as they arrive, or they are longer than BACKLOG_MAX_MB's estimate assumes. Check the API's health and held organizations (operator page), or give Redis more maxmemory or BACKLOG_MAX_MB less`
      }
      if (memory.used + bytes > memory.max) {
        return `Redis is full (${mb(memory.used)} of its maxmemory ${mb(memory.max)}) with no strings waiting: the room is taken by ${this.counts.failed} parked strings (kept until a restart replays them), finished strings kept for de-duplication (DEDUPE_MAX) or other keys. Give Redis more maxmemory, or lower DEDUPE_MAX, or move other data off this Redis`
      }
    }
    if (used + bytes > max && this.counts.backlog > 0) {
      return `the backlog in Redis is full (about ${mb(used)} for ${this.counts.backlog} strings, BACKLOG_MAX_MB=${(max / 2 ** 20).toFixed(0)}): strings are not being reported as fast as they arrive. Check the API's health, or give Redis more memory and raise BACKLOG_MAX_MB`
    }
    if (organization === undefined) return undefined
    const mine = this.bytesOf(organization)
    const share = max * (this.options.organizationShare ?? 1)
    if (mine + bytes > share && mine > 0) {
      return `this organization's share of the backlog in Redis is full (about ${mb(mine)} of ${mb(share)}, BACKLOG_ORGANIZATION_SHARE of BACKLOG_MAX_MB): its strings are not being reported as fast as they arrive. Check whether it is held (operator page), or give Redis more memory and raise BACKLOG_MAX_MB`
    }
    return undefined
  }

  /** Strings of each organization waiting (estimated from the fairness positions; at most 250 ms old). */
  waitingPerOrganization(): ReadonlyMap<string, number> {
    return this.waitingByOrganization
  }

  /** Strings queued, delayed or running across every instance (refreshed at most every 250 ms). */
  async backlog(): Promise<number> {
    if (Date.now() - this.counts.at > 250) {
      this.refreshing ??= Promise.all([this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed'), this.heldCounts(), this.queueClient.hlen(this.keptKey), this.readMemory()])
        .then(async ([c, held, kept]) => {
          const queued = (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0)
          let heldStrings = 0
          for (const n of held.values()) heldStrings += n
          // Strings kept behind a status update under way wait too (as a held string, their JSON).
          this.counts = { backlog: queued + heldStrings + kept, failed: c.failed ?? 0, held: heldStrings, bytes: queued * REDIS_BYTES_PER_STRING + (heldStrings + kept) * REDIS_BYTES_PER_HELD_STRING, at: Date.now() }
          await this.refreshShares(queued, held)
        })
        .finally(() => {
          this.refreshing = undefined
        })
      await this.refreshing
    }
    return this.counts.backlog
  }

  /**
   * Each organization's waiting strings: its steps' strings at or past the clock (never more than
   * the whole backlog: strings removed from the queue by other means leave their positions), and
   * when its oldest one was queued (or held, if earlier). With the queue empty,
   * clock and positions start again from 0 (atomically: only if Redis still finds it empty).
   */
  private async refreshShares(queued: number, held: ReadonlyMap<string, number>): Promise<void> {
    const q = (type: string) => this.queue.toKey(type)
    this.heldByOrganization = held
    const waiting = new Map(held)
    if (queued === 0) {
      await this.queueClient.eval(RESET_WHEN_EMPTY, 10, this.positionsKey, this.clockKey, q('wait'), q('prioritized'), q('active'), q('delayed'), q('paused'), q('fair:positions'), this.leaseKey, this.epochKey)
      this.waitingByOrganization = waiting
      this.oldestByOrganization = new Map(this.heldSince)
      return
    }
    const [positions, clock] = await Promise.all([this.queueClient.hgetall(this.positionsKey), this.queueClient.get(this.clockKey)])
    const now = Number(clock ?? 0) * FAIR_TURN
    const oldest = new Map<string, number>()
    // Organizations the clock has passed leave the hash (a busy queue may never be empty to reset it).
    const passed = this.queueClient.pipeline()
    for (const [organization, text] of Object.entries(positions)) {
      const { waiting: n, oldestAt } = flowsWaiting(text, now)
      if (n > 0) waiting.set(organization, (waiting.get(organization) ?? 0) + Math.min(queued, n))
      if (oldestAt !== undefined) oldest.set(organization, oldestAt)
      else passed.eval(FORGET_PASSED, 1, this.positionsKey, organization, text)
    }
    if (passed.length) await passed.exec()
    for (const [organization, at] of this.heldSince) if (!oldest.has(organization) || at < oldest.get(organization)!) oldest.set(organization, at)
    this.waitingByOrganization = waiting
    this.oldestByOrganization = oldest
  }

  /**
   * Redis's memory (INFO memory), for the ceiling in refuse(). The first reading also says, once,
   * where BACKLOG_MAX_MB cannot fit in maxmemory, or Redis has none. A Redis that does not allow
   * INFO leaves the budget's estimate alone in charge.
   */
  private async readMemory(): Promise<void> {
    let memory: { used: number; max: number } | undefined
    try {
      memory = redisMemoryOf(await this.queueClient.info('memory'))
    } catch (error) {
      // A reading that fails is not used, nor what was added to the last one since.
      this.memory = undefined
      if (!this.memoryFailureLogged) this.options.log.warn({ err: error }, 'Redis did not answer INFO memory (not allowed to this user, or not reachable): until it does, batches are refused by the estimate of BACKLOG_MAX_MB alone, not also when Redis is nearly full')
      this.memoryFailureLogged = true
      return
    }
    this.memory = memory
    if (this.memoryChecked || !memory) return
    this.memoryChecked = true
    const budget = this.options.maxBytes
    const needed = budget === undefined ? undefined : 1.2 * budget + (this.options.dedupeMax ?? 0) * REDIS_BYTES_PER_FINISHED_JOB
    if (memory.max === 0) {
      this.options.log.warn({ backlogMaxMb: budget === undefined ? undefined : Math.round(budget / 2 ** 20) }, 'Redis has no maxmemory: a backlog larger than the machine can hold will take Redis down instead of getting 503. Set maxmemory (docs/deployment.md)')
    } else if (needed !== undefined && needed > memory.max * REDIS_MEMORY_CEILING) {
      this.options.log.warn({ backlogMaxMb: Math.round(budget! / 2 ** 20), maxmemoryMb: Math.round(memory.max / 2 ** 20), neededMb: Math.round(needed / REDIS_MEMORY_CEILING / 2 ** 20) }, `Redis's maxmemory is smaller than BACKLOG_MAX_MB and the finished jobs need (1.2 x BACKLOG_MAX_MB plus DEDUPE_MAX x 2.3 KB, within ${REDIS_MEMORY_CEILING * 100}% of maxmemory): batches will get 503 when Redis is nearly full, before the budget is reached. Raise maxmemory to neededMb (docs/deployment.md), or lower BACKLOG_MAX_MB`)
    }
  }

  /** Held strings per organization id (one HLEN per held domain, in one round trip). */
  private async heldCounts(): Promise<Map<string, number>> {
    const entries = await this.heldDomains()
    const out = new Map<string, number>()
    if (!entries.length) {
      this.heldByDomain = new Map()
      this.heldSince = new Map()
      return out
    }
    const pipeline = this.queueClient.pipeline()
    for (const { domain } of entries) pipeline.hlen(this.heldKey(domain))
    const answers = (await pipeline.exec()) ?? []
    const since = new Map<string, number>()
    const byDomain = new Map<string, number>()
    entries.forEach(({ organization, domain, since: at }, i) => {
      if (!this.domains.has(organization) && this.domains.size < 10_000) this.domains.set(organization, domain)
      const n = Number(answers[i]?.[1] ?? 0)
      byDomain.set(domain, n)
      if (n > 0) out.set(organization, (out.get(organization) ?? 0) + n)
      if (n > 0 && at !== undefined && !(at >= (since.get(organization) ?? Infinity))) since.set(organization, at)
    })
    this.heldSince = since
    this.heldByDomain = byDomain
    return out
  }

  /** Strings queued, delayed, running or held across every instance, at the last refresh of `backlog()`. */
  waiting(): number {
    return this.counts.backlog
  }

  /**
   * The backlog per organization for the metrics and the operator page, at the last refresh of
   * `backlog()`: strings waiting (queued or held) as the fairness positions and the held hashes
   * count them, the Redis memory they take (estimated as for the budget), and when the oldest was
   * queued (held ones: when their organization was first held).
   */
  list(): BacklogView[] {
    return [...this.waitingByOrganization].map(([organization, n]) => {
      const oldestAt = this.oldestByOrganization.get(organization)
      return { organization, domain: this.domains.get(organization) ?? organization, strings: n, waiting: n, bytes: this.bytesOf(organization), ...(oldestAt !== undefined ? { oldestAt } : {}) }
    })
  }

  /** Redis memory of an organization's waiting strings, estimated: held ones at their own rate. */
  private bytesOf(organization: string): number {
    const n = this.waitingByOrganization.get(organization) ?? 0
    const held = Math.min(n, this.heldByOrganization.get(organization) ?? 0)
    return (n - held) * REDIS_BYTES_PER_STRING + held * REDIS_BYTES_PER_HELD_STRING
  }

  /** Strings held in Redis (at the last refresh of `backlog()`). */
  get held(): number {
    return this.counts.held
  }

  get size(): number {
    return this.counts.backlog
  }

  get parked(): number {
    return this.counts.failed
  }

  /**
   * Take no more jobs (shutdown); batches are still appended, for the other instances, until
   * close(). The worker pauses rather than closes: the locks of the strings taken are still renewed,
   * so that no other instance takes a string this one is still running or reporting (closed, the
   * locks lapsed within QUEUE_LOCK_MS and another instance ran and reported them again). Strings
   * taken and not started are for the caller to give back (`giveBack`); those still running at
   * close() go to other instances when their lock expires.
   */
  async stopTaking(): Promise<void> {
    this.taking = false
    await this.worker?.pause(true).catch(() => undefined)
  }

  /**
   * Strings taken and not started (the instance stops) back to BullMQ at once, their attempts
   * kept: another instance takes them now rather than when their lock would have lapsed. Never rejects.
   */
  async giveBack(jobs: Job[]): Promise<void> {
    await this.delay(jobs, 0, 0, false)
  }

  async close(): Promise<void> {
    this.closing = true
    clearTimeout(this.clockTimer)
    await this.stopTaking()
    await this.underWayEnded(CLOSE_WAIT_MS)
    await this.worker?.close(true).catch(() => undefined)
    // Jobs that ended here before the stop: what was kept behind them goes now (bounded: with Redis
    // gone, the sweep of another instance, or of the next start, lets go of them).
    await withDeadline(this.letGoOfEnded(), CLOSE_WAIT_MS, 'Redis did not answer').catch(() => undefined)
    await this.queue.close().catch(() => undefined)
    this.workerClient?.disconnect()
    this.queueClient.disconnect()
  }

  /**
   * What is under way ends (`underWay`), or `waitMs` passes. Cut off by the disconnection, a
   * release left its lock for 60 s (no instance released the organization's strings meanwhile),
   * and a string reported here whose job had not completed was taken by another instance once its
   * lock lapsed. Releases stop after the chunk they are on.
   */
  private async underWayEnded(waitMs: number): Promise<void> {
    const deadline = Date.now() + waitMs
    const { releases, completing } = this.underWay
    while ((releases.size > 0 || this.underWay.notes > 0 || completing.size > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
}
