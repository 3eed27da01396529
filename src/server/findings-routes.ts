// The findings log for people: GET /findings?stringId=…&key=…&languageId=… answers "why was this
// string sent back?" as JSON (scripts, curl) or as a page (a browser, or the operator page's search
// form), behind the operator password guard. Every interpolated value goes through escapeHtml.
import { Router } from '@koa/router'
import type { Middleware } from 'koa'
import type { Config } from '../config/load-config.js'
import type { FindingsEntry, FindingsLog } from '../findings/findings-log.js'
import { escapeHtml, sendPage } from './operator-page.js'

export interface FindingsQuery { stringId?: number; key?: string; languageId?: string }

/** The query's search terms, or the reason it has none usable. */
export function parseFindingsQuery(q: Record<string, string | string[] | undefined>): { ok: true; query: FindingsQuery } | { ok: false; error: string } {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() || undefined
  const id = one(q.stringId)
  const key = one(q.key)
  const languageId = one(q.languageId)
  if (id !== undefined && !/^\d{1,15}$/.test(id)) return { ok: false, error: 'stringId must be a number' }
  if (id === undefined && key === undefined) return { ok: false, error: 'give a stringId or a key' }
  if (key !== undefined && key.length > 1000) return { ok: false, error: 'key is longer than 1000 characters' }
  return { ok: true, query: { ...(id !== undefined ? { stringId: Number(id) } : {}), ...(key !== undefined ? { key } : {}), ...(languageId ? { languageId } : {}) } }
}

export function findingsSearchForm(q: FindingsQuery = {}): string {
  return `<form method="get" action="/findings">
<label>String id<input name="stringId" inputmode="numeric" pattern="[0-9]*" autocomplete="off" value="${escapeHtml(q.stringId ?? '')}"></label>
<label>or key<input name="key" autocomplete="off" spellcheck="false" value="${escapeHtml(q.key ?? '')}"></label>
<button type="submit">Search</button>
</form>`
}

function entryCard(e: FindingsEntry): string {
  const verdict = e.sentBack ? '<span class="bad">sent back</span>' : e.outcome === '' ? '<span class="warn">parked</span>' : '<span class="ok">passed</span>'
  const findings = e.findings.length
    ? `<table>
<thead><tr><th>Severity</th><th>Check</th><th>Finding</th></tr></thead>
<tbody>
${e.findings.map((f) => `<tr><td>${escapeHtml(f.severity)}</td><td><code>${escapeHtml(f.check)}</code>${f.code ? `<br><span class="muted">${escapeHtml(f.code)}</span>` : ''}</td><td>${escapeHtml(f.message)}${f.quote !== undefined ? `<br><span class="muted">in the ${escapeHtml(f.in ?? 'translation')}:</span> <code>${escapeHtml(f.quote)}</code>` : ''}</td></tr>`).join('\n')}
</tbody>
</table>`
    : '<p class="muted">No findings.</p>'
  const open = (e.issues ?? []).filter((i) => i.status === 'unresolved').map((i) => `#${i.id}`)
  return `<div class="card">
<p><strong>String ${escapeHtml(e.stringId)}</strong> <code>${escapeHtml(e.key)}</code> · ${escapeHtml(e.languageId)} · ${escapeHtml(e.domain)}, project ${escapeHtml(e.projectId)}, step ${escapeHtml(e.stepId)}</p>
<p>${verdict}: output <code>${escapeHtml(e.outcome === '' ? '""' : e.outcome)}</code>${e.output ? ` (${escapeHtml(e.output)})` : ''} by <code>${escapeHtml(e.pipeline)}</code> at <time datetime="${escapeHtml(e.at)}">${escapeHtml(e.at)}</time>${open.length ? ` · open issue ${escapeHtml(open.join(', '))}` : ''}</p>
${findings}
</div>`
}

export function renderFindingsPage(q: FindingsQuery, entries: FindingsEntry[] | undefined, error?: string): string {
  const results = error
    ? `<p class="bad">${escapeHtml(error)}</p>`
    : entries === undefined
      ? ''
      : entries.length
        ? entries.map(entryCard).join('\n')
        : '<p class="muted">Nothing is logged for this string: every outcome this worker reported for it in the retention period (FINDINGS_RETENTION_DAYS) was a clean pass (no finding; those make no entry of their own), or it was not reported by this worker in that time.</p>'
  return `<h1>Findings</h1>
<p class="muted">The latest outcome of each string and language, and the findings behind it. <a href="/">Operator page</a></p>
<div class="card">
${findingsSearchForm(q)}
</div>
${results}`
}

export function createFindingsRouter(deps: { config: Config; findings: FindingsLog; guard?: Middleware }): Router {
  const router = new Router({ sensitive: true, strict: true })
  router.get('/findings', deps.guard ?? (async (_ctx, next) => next()), async (ctx) => {
    const html = ctx.accepts('json', 'html') === 'html'
    const parsed = parseFindingsQuery(ctx.query)
    if (!html) {
      ctx.set('Cache-Control', 'no-store')
      if (!parsed.ok) {
        ctx.status = 400
        ctx.body = { error: { code: 'bad_query', message: parsed.error } }
        return
      }
      ctx.body = { data: await deps.findings.search(parsed.query) }
      return
    }
    const empty = ctx.querystring === ''
    if (!parsed.ok) return sendPage(ctx, deps.config, empty ? 200 : 400, 'Findings', renderFindingsPage({}, undefined, empty ? undefined : parsed.error))
    sendPage(ctx, deps.config, 200, 'Findings', renderFindingsPage(parsed.query, await deps.findings.search(parsed.query)))
  })
  return router
}
