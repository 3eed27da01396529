// The worker's metrics, on a registry of its own (several workers can share a test process).
// Served at GET /metrics in Prometheus text format.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export function createMetrics(options: { defaults?: boolean } = {}) {
  const registry = new Registry()
  if (options.defaults !== false) collectDefaultMetrics({ register: registry, prefix: 'switchyard_' })
  const m = {
    registry,
    batches: new Counter({ name: 'switchyard_webhook_batches_total', help: 'Webhook requests by result', labelNames: ['result'], registers: [registry] }),
    decodes: new Counter({ name: 'switchyard_webhook_decodes_total', help: 'Webhook bodies checked and parsed, by where: thread (a thread of the ingest pool) or inline (the main thread: INGEST_THREADS=0, the thread module missing, or a body under 16 KB)', labelNames: ['where'], registers: [registry] }),
    events: new Counter({ name: 'switchyard_webhook_events_total', help: 'Events received by event name', labelNames: ['event'], registers: [registry] }),
    jobs: new Counter({ name: 'switchyard_jobs_total', help: 'Strings by outcome (reported, duplicate, stale, superseded, rejected, dropped, parked, held, retried, absorbed) and output port', labelNames: ['outcome', 'port'], registers: [registry] }),
    queueDepth: new Gauge({ name: 'switchyard_queue_depth', help: 'Strings accepted and not yet finished', registers: [registry] }),
    queueWaiting: new Gauge({ name: 'switchyard_queue_waiting', help: 'Strings waiting for a pipeline run', registers: [registry] }),
    retrying: new Gauge({ name: 'switchyard_retrying_strings', help: 'Strings in memory waiting out a back-off before they run again (their organization\'s API failed, or their pipeline asked for a retry); with QUEUE=bullmq those whose API failed wait in BullMQ\'s delayed set instead', registers: [registry] }),
    journalSize: new Gauge({ name: 'switchyard_journal_jobs', help: 'Strings in the intake journal', registers: [registry] }),
    parked: new Gauge({ name: 'switchyard_parked_jobs', help: 'Strings parked (a refusal with no rule of its own, or retries spent while the organization\'s API answers its other requests), tried again at the next start', registers: [registry] }),
    apiLatency: new Histogram({ name: 'switchyard_api_request_seconds', help: 'API requests by route and status code', labelNames: ['route', 'status'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] }),
    apiRetries: new Counter({ name: 'switchyard_api_retries_total', help: 'API retries by reason (429, 5xx, network)', labelNames: ['reason'], registers: [registry] }),
    pipelineRuns: new Counter({ name: 'switchyard_pipeline_runs_total', help: 'Pipeline runs by pipeline', labelNames: ['pipeline'], registers: [registry] }),
    checkTimeouts: new Counter({ name: 'switchyard_check_timeouts_total', help: 'Checks stopped because they kept a pipeline thread busy past CHECK_TIME_BUDGET_MS (their thread was replaced)', registers: [registry] }),
    pipelineThreads: new Gauge({ name: 'switchyard_pipeline_threads', help: 'Pipeline threads alive, spare ones (PIPELINE_SPARE_THREADS) and the long-text lane\'s (PIPELINE_LONG_TEXT_CHARS) included', registers: [registry] }),
    longTextStrings: new Counter({ name: 'switchyard_pipeline_long_text_strings_total', help: 'Strings run on the long-text lane (PIPELINE_LONG_TEXT_CHARS): niced threads apart from the ordinary ones', registers: [registry] }),
    spareRuns: new Counter({ name: 'switchyard_pipeline_spare_runs_total', help: 'Pipeline runs handed to a thread beyond PIPELINE_THREADS because long runs held the others', registers: [registry] }),
    plugin: new Counter({ name: 'switchyard_plugin_total', help: 'Counters kept by plugins (ai.requests, ai.tokens.in, ai.cache.hits, ...)', labelNames: ['metric'], registers: [registry] }),
    held: new Gauge({ name: 'switchyard_held_jobs', help: 'Strings held because their organization cannot update statuses, by cause (disconnected, forbidden, unavailable): those each listed organization has waiting in the backlog (with QUEUE=bullmq, Redis\'s count for the organizations this instance held), from its first hold until a status update for it goes through, its tries included', labelNames: ['cause'], registers: [registry] }),
    backlogStrings: new Gauge({ name: 'switchyard_backlog_strings', help: 'Strings acknowledged and not yet reported (journaled), per organization', labelNames: ['organization'], registers: [registry] }),
    backlogWaiting: new Gauge({ name: 'switchyard_backlog_waiting_strings', help: 'Strings waiting on disk, not in memory, per organization', labelNames: ['organization'], registers: [registry] }),
    backlogBytes: new Gauge({ name: 'switchyard_backlog_bytes', help: 'Journal bytes of the backlog, per organization (BACKLOG_MAX_MB bounds their sum)', labelNames: ['organization'], registers: [registry] }),
    backlogOldest: new Gauge({ name: 'switchyard_backlog_oldest_seconds', help: 'Age of the oldest string waiting in the backlog (on disk; in Redis with QUEUE=bullmq), per organization', labelNames: ['organization'], registers: [registry] }),
    heldOrganizations: new Gauge({ name: 'switchyard_held_organizations', help: 'Organizations whose strings are held, by cause, from the first hold until a status update for it goes through (its tries included)', labelNames: ['cause'], registers: [registry] }),
    invalidEvents: new Counter({ name: 'switchyard_webhook_invalid_events_total', help: 'Events of accepted batches that could not be used, by what became of them (parked: reported with "" at the service; logged: no string to report)', labelNames: ['result'], registers: [registry] }),
    rechecks: new Counter({ name: 'switchyard_status_rechecks_total', help: 'Strings that arrived again after they finished here, by the status the service gave them (NEED_PROCESS runs again)', labelNames: ['status'], registers: [registry] }),
    findings: new Counter({ name: 'switchyard_findings_total', help: 'Findings of reported strings by check and severity (at most 200 checks; the rest count as check="other")', labelNames: ['check', 'severity'], registers: [registry] }),
    issues: new Counter({ name: 'switchyard_issues_total', help: 'Issues at the service by outcome (raised, already-open, resolved, failed, dropped, stale, refused)', labelNames: ['outcome'], registers: [registry] }),
    findingsLogFailures: new Counter({ name: 'switchyard_findings_log_failures_total', help: 'Findings log writes that failed (the status was reported)', registers: [registry] }),
    reconcileOrphans: new Counter({ name: 'switchyard_reconcile_orphans_total', help: 'Strings the service waits on that this worker holds no job for', registers: [registry] }),
  }
  return m
}

export type Metrics = ReturnType<typeof createMetrics>

/**
 * A label value from an open-ended source (check ids come from pipelines), kept to at most `max`
 * distinct values: the rest are counted as `other`, so a careless pipeline can't grow the series
 * without bound.
 */
export function boundedLabels(max: number): (value: string) => string {
  const seen = new Set<string>()
  return (value) => {
    if (seen.has(value)) return value
    if (seen.size >= max) return 'other'
    seen.add(value)
    return value
  }
}
