// Every option of the worker, declared once as data: name, environment variable, type, typed default
// (or a default computed from the other options) and description. The `Config` type, parsing,
// validation, `switchyard config` and the README table all come from this one list (the Renovate
// habit): adding an option is one edit here.
import { availableParallelism } from 'node:os'
import path from 'node:path'
import { PACKAGE_ROOT } from './package-root.js'
import { MAX_TIMER_MS } from '../util/max-timer.js'

export type OptionKind = 'string' | 'secret' | 'url' | 'int' | 'list' | 'secret-list' | 'enum' | 'bool'

/**
 * A default computed when the option is not set, from the options that have values by then (every
 * option with a literal default or a value, and the computed ones declared before it). Its
 * parameter names only what it reads; a type test checks that `Config` has it.
 */
export type ComputedDefault<T> = (config: never) => T

interface SpecBase {
  env: string
  description: string
  /** An empty value (`VAR=`) is kept as empty instead of meaning "use the default". */
  emptyMeansNone?: boolean
}

export type OptionSpec =
  | SpecBase & { kind: 'string' | 'secret' | 'url'; default?: string | ComputedDefault<string> }
  | SpecBase & { kind: 'int'; default?: number | ComputedDefault<number>; min?: number; max?: number }
  | SpecBase & { kind: 'bool'; default?: boolean }
  | SpecBase & { kind: 'list' | 'secret-list'; default?: readonly string[] }
  | SpecBase & { kind: 'enum'; values: readonly string[]; default?: string }

/** The value an option holds in `Config`, by its kind. */
export type OptionValue<S> =
  S extends { kind: 'int' } ? number
    : S extends { kind: 'bool' } ? boolean
      : S extends { kind: 'list' | 'secret-list' } ? string[]
        : S extends { kind: 'enum'; values: ReadonlyArray<infer V> } ? V
          : string

export { MAX_TIMER_MS }

/** The iframe script of the real platform (defines `AP`); the settings page loads it by default. */
export const PLATFORM_IFRAME_SCRIPT = 'https://cdn.crowdin.com/apps/dist/iframe.js'

export const OPTIONS = {
  port: { env: 'PORT', kind: 'int', default: 3000, min: 0, max: 65535, description: 'HTTP port the worker listens on (0: any free port, for tests; the default BASE_URL does not learn the port picked, so set BASE_URL with it).' },
  host: { env: 'HOST', kind: 'string', default: '0.0.0.0', description: 'Address the worker binds to.' },
  baseUrl: { env: 'BASE_URL', kind: 'url', default: (c: { port: number }) => `http://localhost:${c.port}`, description: 'Public address of the worker, as the service reaches it; fills the manifest and the OAuth redirect URI. Default: http://localhost:PORT.' },
  appSecrets: { env: 'APP_SECRET', kind: 'secret-list', description: 'The app_secret(s) the service signs webhooks with, comma-separated. `ORG_ID=SECRET` applies to that organization only (the service gives each installation its own secret); a plain `SECRET` to every organization. Several per organization to rotate. A delivery is verified only with the secrets of the organization it names.' },
  clientId: { env: 'CLIENT_ID', kind: 'string', description: 'OAuth client id of the app. Needs CLIENT_SECRET: set without it, the worker refuses to start.' },
  clientSecret: { env: 'CLIENT_SECRET', kind: 'secret', description: 'OAuth client secret; also the key of the JWTs on settings callbacks.' },
  authUrl: { env: 'AUTH_URL', kind: 'url', description: 'Address of the authorization server ({auth_url}).' },
  apiUrl: { env: 'API_URL', kind: 'string', description: 'Address of the enterprise API ({enterprise_api_url}); may hold {organization_domain}.' },
  storeUrl: { env: 'STORE_URL', kind: 'string', default: (c: { dataDir: string }) => `sqlite://${path.join(c.dataDir, 'switchyard.sqlite')}`, description: 'Where state lives: sqlite://PATH (default), redis://..., postgres://..., or memory:// (tests; loses everything on exit).' },
  dataDir: { env: 'DATA_DIR', kind: 'string', default: './data', description: 'Directory for the embedded SQLite store, the generated token key, and webhook bodies too large for memory while they are read (incoming/).' },
  pipelinesDir: { env: 'PIPELINES_DIR', kind: 'string', default: () => path.join(PACKAGE_ROOT, 'pipelines'), description: 'Directory of pipeline files (*.yaml or *.yml; not both for one name), or a comma-separated list of pipeline files. Default: the shipped pipelines/.' },
  pluginsDir: { env: 'PLUGINS_DIR', kind: 'string', description: "Directory of the operator's own plugins (*.js, *.mjs)." },
  openaiApiKey: { env: 'OPENAI_API_KEY', kind: 'secret', description: 'API key of the OpenAI-compatible endpoint used by ai-proofread; sent to OPENAI_BASE_URL (else OpenAI) only: a pipeline whose baseUrl names another server gives its own apiKey, or sends none. Not needed by a self-hosted server that takes requests without one.' },
  openaiBaseUrl: { env: 'OPENAI_BASE_URL', kind: 'url', description: 'Base URL of an OpenAI-compatible endpoint (self-hosted models): the server of OPENAI_API_KEY. Default: OpenAI.' },
  headerPrefix: { env: 'HEADER_PREFIX', kind: 'string', default: 'X-Service-', description: 'Prefix of the webhook headers (X-Service-Signature, ...); the real platform uses X-Crowdin-.' },
  bodyLimit: { env: 'BODY_LIMIT', kind: 'int', default: 128 * 1024 * 1024, min: 1024, description: "Largest webhook body accepted, in bytes; larger ones get 413 (and the service, after its retries, marks the batch's strings FAILED). The default, 128 MiB, holds about 45,000 string events of the service's full size (about 2.8 KB each). A body over BODY_MEMORY_LIMIT is written to DATA_DIR/incoming as it arrives, so this times UNVERIFIED_BODIES is the disk (not memory) an unauthenticated client can make the worker fill for as long as it takes to send it." },
  bodyMemoryLimit: { env: 'BODY_MEMORY_LIMIT', kind: 'int', default: 10 * 1024 * 1024, min: 1024, description: 'Webhook bodies up to this many bytes are read into memory; larger ones (taken only from a delivery with the X-…-Id header) go to a file in DATA_DIR/incoming while their signature is computed, and a verified one is read back and decoded a few events at a time (deleted once answered). This times UNVERIFIED_BODIES is the memory an unauthenticated client can make the worker hold.' },
  unverifiedBodies: { env: 'UNVERIFIED_BODIES', kind: 'int', default: 8, min: 1, max: 1000, description: 'Webhook bodies read at once before their signature is checked; more wait, unread, for up to UNVERIFIED_WAIT_MS, then get 503 with Retry-After.' },
  unverifiedWaitMs: { env: 'UNVERIFIED_WAIT_MS', kind: 'int', default: 5000, min: 0, max: 25000, description: 'How long a webhook waits, its body unread, for one of the UNVERIFIED_BODIES slots before 503 (deliveries that merely arrive together all get through).' },
  headersTimeoutMs: { env: 'HEADERS_TIMEOUT_MS', kind: 'int', default: 10000, min: 100, max: MAX_TIMER_MS, description: 'A client that has not sent all its request headers within this time is cut off (slow headers).' },
  requestTimeoutMs: { env: 'REQUEST_TIMEOUT_MS', kind: 'int', default: 30000, min: 100, max: MAX_TIMER_MS, description: "A request whose body has not fully arrived within this time is cut off with 408 (slow uploads); the service gives up on a webhook after 30 s anyway." },
  metricsToken: { env: 'METRICS_TOKEN', kind: 'secret', description: 'When set, GET /metrics needs "Authorization: Bearer METRICS_TOKEN". Unset: /metrics is open (keep it off the public address).' },
  queueLimit: { env: 'QUEUE_LIMIT', kind: 'int', default: 10000, min: 1, description: 'Strings in memory waiting or running at most: the window of the backlog, refilled from the journal as it drains. It does not limit acceptance (BACKLOG_MAX_MB does). Strings waiting out a back-off after their organization\'s API failed give their room to others meanwhile (their organization takes nothing more from the disk until they go), so memory can hold up to twice this.' },
  backlogMaxMb: { env: 'BACKLOG_MAX_MB', kind: 'int', default: 4096, min: 1, description: 'Disk budget of the backlog (strings acknowledged and not yet reported), in MB of journal; with QUEUE=bullmq, Redis memory (estimated; batches are also refused once Redis is past 90% of its maxmemory). Past it, or past one organization\'s share, webhooks get 503 with Retry-After: the only reason for a 503.' },
  backlogOrganizationShare: { env: 'BACKLOG_ORGANIZATION_SHARE', kind: 'int', default: 50, min: 1, max: 100, description: 'Percent of BACKLOG_MAX_MB one organization may fill, so one cannot fill the disk for the others.' },
  ingestThreads: { env: 'INGEST_THREADS', kind: 'int', default: () => defaultIngestThreads(), min: 0, max: 64, description: 'Threads that check signatures and parse webhook bodies, beside the main thread. Default: one per CPU core, at most 4, and 0 (decode on the main thread) on a single core.' },
  ingestThreadIdleMs: { env: 'INGEST_THREAD_IDLE_MS', kind: 'int', default: 10000, min: 0, max: MAX_TIMER_MS, description: 'An ingest thread with no webhook body to decode for this long is stopped, giving back its memory (about 25-30 MB each); the next large body starts one again (about 80 ms). 0 keeps the threads until shutdown.' },
  pipelineThreads: { env: 'PIPELINE_THREADS', kind: 'int', default: () => defaultPipelineThreads(), min: 0, max: 64, description: 'Threads that run the pipelines, so that no check holds up the main thread (webhooks, /healthz, reports). Default: one fewer than the CPU cores, at least 1 and at most 4 (each thread holds its own copy of the pipelines, about 40 MB); 0 runs the pipelines on the main thread, with no time budget.' },
  pipelineSpareThreads: { env: 'PIPELINE_SPARE_THREADS', kind: 'int', default: 2, min: 0, max: 64, description: 'Threads a pipeline run may start beyond PIPELINE_THREADS while the others are held by stuck or long runs (a check that has stood still for 250 ms while its thread computed, as one running away until CHECK_TIME_BUDGET_MS stops it does, not one whose thread merely waits for a core on a starved machine; or a run that has lasted 1 s, as awaited AI calls do), so that such a run does not hold up the rest. A spare thread loads the pipelines as it starts (a few hundred ms of CPU, about 40 MB) and leaves after 30 s without work; ordinary runs (10-40 ms) and long texts (tens of ms a check) never start one. 0: runs wait for PIPELINE_THREADS.' },
  pipelineLongTextChars: { env: 'PIPELINE_LONG_TEXT_CHARS', kind: 'int', default: 5000, min: 0, description: 'A string whose texts (source, translation, plural forms) hold more characters than this together runs apart from the others, on the long-text lane: as many threads as PIPELINE_THREADS, started when such a string comes and gone after 5 min idle (about 40 MB each while they live, and up to about 25 MB more once they have checked long texts: a 32 MB young generation against 8 for the other threads, which V8 need not give back before the thread leaves), below the rest of the worker in CPU priority (PIPELINE_LONG_TEXT_NICE), so that on a busy machine a 50 KB text takes the CPU ordinary strings leave over instead of theirs; the other strings of its run are reported without waiting for it. 0: no lane. Needs PIPELINE_THREADS > 0.' },
  pipelineThreadNice: { env: 'PIPELINE_THREAD_NICE', kind: 'int', default: 3, min: 0, max: 19, description: 'How many nice values (Linux) the pipeline threads (PIPELINE_THREADS and the spare ones) run below the worker\'s main thread once their pipelines are loaded, so that on a saturated machine webhooks, /healthz and reports get the CPU before checks (3: about half the CPU of the main thread when both want it, a whole core when nothing else does; 0: the same priority). The long-text lane never runs above these threads. Above 0, CHECK_TIME_BUDGET_MS counts the CPU time the thread got, up to twice the budget in elapsed time (more past nice 3). Needs PIPELINE_THREADS > 0.' },
  pipelineLongTextNice: { env: 'PIPELINE_LONG_TEXT_NICE', kind: 'int', default: 10, min: 0, max: 19, description: 'How many nice values (Linux) the long-text lane\'s threads run below the worker, never fewer than PIPELINE_THREAD_NICE (10: nice 10 for a worker at 0; at most 19): under load such a thread gets about a tenth of the CPU of the main thread and about a fifth of that of the ordinary pipeline threads at their default nice 3 (19: about 1/70 and 1/35; 0: the same priority as the ordinary threads). CHECK_TIME_BUDGET_MS then counts the CPU time the thread got, up to 10 times the budget in elapsed time (more past nice 10: 70 times at 19).' },
  checkTimeBudgetMs: { env: 'CHECK_TIME_BUDGET_MS', kind: 'int', default: 2000, min: 100, max: MAX_TIMER_MS, description: "Longest one check of one string may keep its pipeline thread busy without a pause; past it the thread is stopped and replaced and the string gets the finding \"check timed out\" (the pipeline's on-error applies). On a niced thread (PIPELINE_THREAD_NICE, PIPELINE_LONG_TEXT_NICE) it counts the CPU time the thread got, so that waiting for a core on a busy machine is not blamed on the check, up to a multiple of the budget in elapsed time. Awaited calls (an AI request) are bounded by the plugin's own timeout instead. Needs PIPELINE_THREADS > 0." },
  concurrency: { env: 'CONCURRENCY', kind: 'int', default: 4, min: 1, max: 1024, description: 'Pipeline runs at once. Runs of long strings waiting on the long-text lane (PIPELINE_LONG_TEXT_CHARS) come on top, up to 16 million characters of text held.' },
  apiMaxInFlight: { env: 'API_MAX_IN_FLIGHT', kind: 'int', default: 20, min: 1, max: 1000, description: "API requests in flight per organization, per instance (the service's limit is 20 per account: with several replicas, 20 divided by their number)." },
  apiMaxAttempts: { env: 'API_MAX_ATTEMPTS', kind: 'int', default: 8, min: 1, max: 100, description: 'Attempts of one API request (429, 5XX, timeouts, network errors are retried) before its strings are held as unavailable and tried again with back-off; reads made in a work slot (translations, rechecks) take at most 3. A status update (or a new issue) is tried again in place only after a 429: after a 5XX, a timeout or a network error it may have landed, so its strings are held at once and checked with the service first.' },
  apiTimeoutMs: { env: 'API_TIMEOUT_MS', kind: 'int', default: 30000, min: 100, max: MAX_TIMER_MS, description: 'Timeout of one API request.' },
  reportLingerMs: { env: 'REPORT_LINGER_MS', kind: 'int', default: 250, min: 0, max: MAX_TIMER_MS, description: 'How long status updates wait to be coalesced into one PATCH (up to 500 strings).' },
  dedupeTtlMs: { env: 'DEDUPE_TTL_MS', kind: 'int', default: 10 * 60_000, min: 0, description: 'How long a finished string is remembered, so a repeated delivery is absorbed.' },
  dedupeMax: { env: 'DEDUPE_MAX', kind: 'int', default: 100000, min: 0, description: 'At most this many finished strings are remembered for de-duplication (the oldest are forgotten first), so memory stays bounded under a flood; with QUEUE=bullmq, finished jobs kept in Redis (by the shared queue).' },
  parkedRetryMs: { env: 'PARKED_RETRY_MS', kind: 'int', default: 60 * 60_000, min: 0, max: MAX_TIMER_MS, description: 'Period of the retry of parked strings (a refusal of their status update with no rule of its own, or no pipeline for their module key): each is checked with the service and run again; those refused again stay parked until the next retry (0: only at a start).' },
  reconcileIntervalMs: { env: 'RECONCILE_INTERVAL_MS', kind: 'int', default: 5 * 60_000, min: 0, max: MAX_TIMER_MS, description: 'Period of the NEED_PROCESS reconciliation sweep (0: off).' },
  shutdownTimeoutMs: { env: 'SHUTDOWN_TIMEOUT_MS', kind: 'int', default: 20000, min: 0, max: MAX_TIMER_MS, description: 'Deadline for finishing running work on SIGTERM/SIGINT.' },
  findingsRetentionDays: { env: 'FINDINGS_RETENTION_DAYS', kind: 'int', default: 30, min: 1, max: 3650, description: 'How long the findings log keeps the latest outcome and findings of a string (docs/findings.md).' },
  findingsMax: { env: 'FINDINGS_MAX', kind: 'int', default: 100000, min: 1, description: 'Strings the findings log keeps at most; an hourly sweep removes those reported longest ago.' },
  commentsMaxInFlight: { env: 'COMMENTS_MAX_IN_FLIGHT', kind: 'int', default: 2, min: 1, max: 20, description: 'Issue requests (raise, look up, resolve) in flight per organization, within API_MAX_IN_FLIGHT; they wait behind status updates.' },
  tokenKey: { env: 'TOKEN_KEY', kind: 'secret', description: 'Key that encrypts OAuth tokens at rest (32 bytes, base64 or hex). Default: a key file in DATA_DIR, created with mode 0600.' },
  oauthScopes: { env: 'OAUTH_SCOPES', kind: 'string', default: 'project', description: 'Scopes asked for in the authorization request, space-separated.' },
  oauthTokenFormat: { env: 'OAUTH_TOKEN_FORMAT', kind: 'enum', values: ['json', 'form'], default: 'json', description: 'Body encoding of token requests: json (the service) or form (standard OAuth servers).' },
  operatorPassword: { env: 'OPERATOR_PASSWORD', kind: 'secret', description: 'Password of the operator page and /oauth/start (HTTP Basic, any user name). Unset: they answer 403 unless HOST is a loopback address (and then only to requests made on that host, not through a proxy) or OPERATOR_OPEN=true.' },
  operatorOpen: { env: 'OPERATOR_OPEN', kind: 'bool', default: false, description: 'true: without OPERATOR_PASSWORD, the operator page and /oauth/start are open to anyone who reaches the worker on any address (only behind a proxy that authenticates). Default false: open only on a loopback HOST. true/false, 1/0 or yes/no (any case); anything else stops the start.' },
  settingsScriptUrl: { env: 'SETTINGS_SCRIPT_URL', kind: 'string', default: PLATFORM_IFRAME_SCRIPT, emptyMeansNone: true, description: "URL of the service's iframe script (defines AP, which the settings page hands the settings to) loaded by settings pages. Default: the real platform's; set it empty (SETTINGS_SCRIPT_URL=) to load none." },
  settingsFrameAncestors: { env: 'SETTINGS_FRAME_ANCESTORS', kind: 'string', default: '*', description: "CSP frame-ancestors of the settings page: who may frame it (space-separated sources, e.g. https://*.example.com). Default * (the page needs a token only the service mints)." },
  queue: { env: 'QUEUE', kind: 'enum', values: ['memory', 'bullmq'], default: 'memory', description: 'Work queue: in-process (default) or BullMQ on Redis (QUEUE_REDIS_URL or a redis STORE_URL).' },
  queueConcurrency: { env: 'QUEUE_CONCURRENCY', kind: 'int', default: 1000, min: 1, max: 100000, description: 'QUEUE=bullmq: strings one instance works on at once (enough to fill a PATCH of 500).' },
  queueLockMs: { env: 'QUEUE_LOCK_MS', kind: 'int', default: 30000, min: 1000, max: MAX_TIMER_MS, description: "QUEUE=bullmq: how long a string stays with an instance that stopped renewing its lock before another takes it over." },
  queueName: { env: 'QUEUE_NAME', kind: 'string', default: 'switchyard-strings', description: "QUEUE=bullmq: the BullMQ queue, and the prefix of every Redis key the queue keeps (bull:<name>:...). Instances of one deployment share it; another deployment on the same Redis needs its own (letters, digits, - and _), or another database in QUEUE_REDIS_URL (a store on that Redis needs its own database either way)." },
  queueRedisUrl: { env: 'QUEUE_REDIS_URL', kind: 'string', description: 'Redis for QUEUE=bullmq; default: STORE_URL when it is redis://.' },
  logLevel: { env: 'LOG_LEVEL', kind: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', description: 'Log level.' },
  logFormat: { env: 'LOG_FORMAT', kind: 'enum', values: ['auto', 'json', 'pretty'], default: 'auto', description: 'Log lines as JSON (for a log collector) or pretty (for a person); auto: pretty when standard output is a terminal, JSON otherwise.' },
} as const satisfies Record<string, OptionSpec>

export type OptionName = keyof typeof OPTIONS

/** The configuration: one field per option, typed by its kind (an enum's field is its values). */
export type Config = { -readonly [K in OptionName]: OptionValue<(typeof OPTIONS)[K]> }

/**
 * One decoding thread per core, up to 4 (beyond that the main thread, which takes the decoded
 * jobs, is the limit), and none on a single core, where a thread only adds the hop (bench).
 */
export function defaultIngestThreads(cores = availableParallelism()): number {
  return cores > 1 ? Math.min(cores, 4) : 0
}

/**
 * Pipeline threads when PIPELINE_THREADS is not set: one core left to the main thread and the
 * ingest threads, at most 4, and at least one: the point is that no check can stop the main
 * thread, not parallelism. Each thread holds its own copy of the pipelines and plugins (about
 * 40 MB): on 2 cores a second one took the flood bench's peak from 288 to 330 MB, over the 300
 * MB target, with no throughput to show for it on this machine (docs/performance.md).
 */
export function defaultPipelineThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, 4))
}

// Checked when the project compiles: a computed default reads only fields `Config` has (with their
// types), and an enum's default is one of its values.
type Holds<T extends true> = T
type EveryOption<Check extends Record<OptionName, boolean>> = false extends Check[OptionName] ? false : true
type ComputedDefaultsFit = {
  [K in OptionName]: (typeof OPTIONS)[K] extends { default: (config: infer Reads) => unknown } ? (Config extends Reads ? true : false) : true
}
type EnumDefaultsFit = {
  [K in OptionName]: (typeof OPTIONS)[K] extends { kind: 'enum'; values: ReadonlyArray<infer V>; default: infer D } ? (D extends V ? true : false) : true
}
export type OptionsAreConsistent = Holds<EveryOption<ComputedDefaultsFit>> | Holds<EveryOption<EnumDefaultsFit>>
