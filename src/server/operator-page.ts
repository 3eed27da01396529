// The operator page at GET /: which organizations are connected, when their tokens expire, which
// are disconnected, and a form to connect one. Also the page shell the OAuth routes answer with.
// Plain HTML with one inline stylesheet allowed by its hash: no scripts, no external assets, and a
// CSP that forbids everything else. Every interpolated value goes through escapeHtml.
import type { HeldOrganizationView } from '../queue/held-organizations.js'
import type { BacklogView } from '../queue/backlog.js'
import type { Middleware } from 'koa'
import { createHash } from 'node:crypto'
import { Router } from '@koa/router'
import type { Context } from 'koa'
import type { Config } from '../config/load-config.js'
import { redirectUriOf } from '../platform/oauth-client.js'
import type { OrganizationStatus, TokenManager } from '../platform/token-manager.js'

const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5d6677; --bg: #f6f7f9; --card: #fff; --line: #dde1e8;
  --ok: #14733b; --bad: #b3261e; --warn: #8a5a00; --accent: #2f5bd3; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ef; --muted: #a3abba; --bg: #14171c; --card: #1d2128;
  --line: #2d333d; --ok: #5fd08f; --bad: #ff8a80; --warn: #f0c060; --accent: #8fb0ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 56rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
p { margin: .5rem 0; }
.muted { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.25rem; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
.ok { color: var(--ok); font-weight: 600; }
.bad { color: var(--bad); font-weight: 600; }
.warn { color: var(--warn); font-weight: 600; }
tr.flagged td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
form { display: flex; gap: .5rem; flex-wrap: wrap; align-items: end; }
label { display: flex; flex-direction: column; font-size: .9rem; gap: .25rem; }
input { font: inherit; padding: .4rem .6rem; border: 1px solid var(--line); border-radius: .35rem; min-width: 16rem;
  background: var(--bg); color: var(--fg); }
button, .button { font: inherit; padding: .45rem 1rem; border: 0; border-radius: .35rem; background: var(--accent);
  color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
a { color: var(--accent); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
`

const STYLE_HASH = createHash('sha256').update(STYLE, 'utf8').digest('base64')

export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

/** The page's CSP: nothing but our own inline stylesheet; forms may go to us and on to the authorization server. */
export function contentSecurityPolicy(config: Pick<Config, 'authUrl'>): string {
  let formTargets = "'self'"
  // Browsers apply form-action to the redirects that follow a submission: /oauth/start -> AUTH_URL.
  try {
    if (config.authUrl) formTargets += ` ${new URL(config.authUrl).origin}`
  } catch {
    // an invalid AUTH_URL is reported by the configuration check; the page still renders
  }
  return [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `form-action ${formTargets}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
}

/** Answer with a complete HTML page and the security headers. `body` must already be escaped HTML. */
export function sendPage(ctx: Context, config: Pick<Config, 'authUrl'>, status: number, title: string, body: string): void {
  ctx.status = status
  ctx.set('Content-Security-Policy', contentSecurityPolicy(config))
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('X-Frame-Options', 'DENY')
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('Cache-Control', 'no-store')
  ctx.type = 'text/html; charset=utf-8'
  ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Switchyard</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

function formatExpiry(expiresAt: number | undefined, now: number): string {
  if (expiresAt === undefined) return '<span class="muted">not given</span>'
  const minutes = Math.round((expiresAt - now) / 60_000)
  const when = new Date(expiresAt).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')
  const rel = minutes >= 0 ? `in ${minutes} min` : `${-minutes} min ago (refreshed on next use)`
  return `<time datetime="${escapeHtml(new Date(expiresAt).toISOString())}">${escapeHtml(when)}</time> <span class="muted">${escapeHtml(rel)}</span>`
}

function statusCell(org: OrganizationStatus): string {
  switch (org.state) {
    case 'connected':
      return '<span class="ok">Connected</span>'
    case 'disconnected':
      return `<span class="bad">Disconnected</span><br><span class="muted">${escapeHtml(org.reason ?? '')}</span>`
    case 'not-connected':
      return `<span class="warn">Not connected</span><br><span class="muted">${escapeHtml(org.reason ?? '')}</span>`
    default: {
      const never: never = org.state
      return escapeHtml(never)
    }
  }
}

function organizationsTable(orgs: OrganizationStatus[], now: number): string {
  if (orgs.length === 0) return '<p class="muted">No organization is connected yet. Connect one below.</p>'
  const rows = orgs
    .map((org) => {
      const start = `/oauth/start?domain=${encodeURIComponent(org.domain)}`
      const action = org.connected ? 'Reconnect' : 'Connect'
      return `<tr${org.connected ? '' : ' class="flagged"'}>
<td><strong>${escapeHtml(org.domain)}</strong>${org.organizationId ? `<br><span class="muted">id ${escapeHtml(org.organizationId)}</span>` : ''}</td>
<td>${statusCell(org)}</td>
<td>${org.connected ? formatExpiry(org.expiresAt, now) : '<span class="muted">-</span>'}</td>
<td><a href="${escapeHtml(start)}">${action}</a></td>
</tr>`
    })
    .join('\n')
  return `<table>
<thead><tr><th>Organization</th><th>Status</th><th>Access token expires</th><th></th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
}

export interface ActivityEntry {
  at: string
  event: string
  domain?: string
  organizationId?: string
}

function activityTable(entries: ActivityEntry[]): string {
  if (!entries.length) return '<p class="muted">No events other than strings have arrived yet.</p>'
  const rows = entries
    .slice(0, 50)
    .map((e) => `<tr><td>${escapeHtml(e.at)}</td><td><code>${escapeHtml(e.event)}</code></td><td>${escapeHtml(e.domain || e.organizationId || '')}</td></tr>`)
    .join('\n')
  return `<table>
<thead><tr><th>Received</th><th>Event</th><th>Organization</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
}

function heldTable(held: HeldOrganizationView[], now: number): string {
  const rows = held
    .map((h) => {
      const why = h.cause === 'forbidden'
        ? 'the service refuses its status updates (403, or 401 after a refresh): check that the app is still installed and that the connecting user may update string statuses'
        : h.cause === 'unavailable'
          ? "the service's API kept failing (429, 5XX, timeouts or network errors, through each request's retries): they are tried again until it answers; check the service's status and the network to it"
          : 'no usable token: reconnect it'
      // Let go for a try: listed until a status update goes through, or held again if refused.
      const next = h.nextTryAt === undefined ? 'trying now' : `in ${Math.max(0, Math.round((h.nextTryAt - now) / 1000))} s`
      return `<tr class="flagged"><td><strong>${escapeHtml(h.domain)}</strong></td><td>${h.strings}</td><td>${escapeHtml(why)}<br><span class="muted">${escapeHtml(h.reason.slice(0, 300))}</span></td><td>${escapeHtml(new Date(h.since).toISOString())}</td><td>${next}</td></tr>`
    })
    .join('\n')
  return `<table>
<thead><tr><th>Organization</th><th>Strings held</th><th>Why</th><th>Since</th><th>Next try</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
}

function formatBytes(n: number): string {
  return n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MB` : `${(n / 1024).toFixed(0)} kB`
}

/** Strings acknowledged and not yet reported, per organization: on disk, and how old the oldest waiting is. */
export function backlogTable(rows: BacklogView[], now: number): string {
  if (!rows.length) return '<p class="muted">No backlog: every string acknowledged has been reported.</p>'
  const body = rows
    .map((r) => {
      const age = r.oldestAt ? `${Math.max(0, Math.round((now - r.oldestAt) / 1000))} s` : '<span class="muted">-</span>'
      return `<tr><td><strong>${escapeHtml(r.domain)}</strong>${r.organization !== r.domain ? `<br><span class="muted">id ${escapeHtml(r.organization)}</span>` : ''}</td><td>${r.strings}</td><td>${r.waiting}</td><td>${escapeHtml(formatBytes(r.bytes))}</td><td>${age}</td></tr>`
    })
    .join('\n')
  return `<table>
<thead><tr><th>Organization</th><th>Strings not yet reported</th><th>Waiting on disk</th><th>Journal bytes</th><th>Oldest waiting</th></tr></thead>
<tbody>
${body}
</tbody>
</table>`
}

export function renderOperatorPage(config: Config, orgs: OrganizationStatus[], now = Date.now(), activity?: ActivityEntry[], held: HeldOrganizationView[] = [], backlog?: BacklogView[]): string {
  const missing: string[] = []
  if (!config.clientId) missing.push('CLIENT_ID')
  if (!config.clientSecret) missing.push('CLIENT_SECRET')
  if (!config.authUrl) missing.push('AUTH_URL')
  const setup = missing.length
    ? `<p class="bad">Connecting is not possible yet: set ${missing.map((m) => `<code>${escapeHtml(m)}</code>`).join(', ')} (see docs/connect.md).</p>`
    : ''
  const disconnected = orgs.filter((o) => o.state === 'disconnected').length
  const summary = disconnected
    ? `<p class="bad">${disconnected === 1 ? '1 organization is disconnected: its strings wait' : `${disconnected} organizations are disconnected: their strings wait`} in the journal until you reconnect.</p>`
    : ''
  return `<h1>Switchyard</h1>
<p class="muted">Custom workflow steps worker. Redirect URL to register with the app: <code>${escapeHtml(redirectUriOf(config))}</code></p>
${setup}
<h2>Organizations</h2>
<div class="card">
${summary}
${organizationsTable(orgs, now)}
</div>${held.length ? `
<h2>Held strings</h2>
<div class="card">
<p class="bad">Strings of these organizations can't be reported now. They are kept, never dropped, and tried again with back-off. An organization stays listed while it is tried, until a status update for it goes through; Since is when it was first held.</p>
${heldTable(held, now)}
</div>` : ''}${backlog ? `
<h2>Backlog</h2>
<div class="card">
${backlogTable(backlog, now)}
</div>` : ''}
<h2>Connect an organization</h2>
<div class="card">
<form method="post" action="/oauth/start">
<label>Organization domain<input name="domain" required autocomplete="off" spellcheck="false" placeholder="acme" pattern="[A-Za-z0-9][A-Za-z0-9.\\-]*"></label>
<button type="submit">Connect</button>
</form>
<p class="muted">You will be sent to the service to approve access, then back here.</p>
</div>
<h2>Findings</h2>
<div class="card">
<form method="get" action="/findings">
<label>String id<input name="stringId" inputmode="numeric" pattern="[0-9]*" autocomplete="off"></label>
<label>or key<input name="key" autocomplete="off" spellcheck="false"></label>
<button type="submit">Search</button>
</form>
<p class="muted">Why a string went where it went: its latest outcome per language and the findings behind it (also as JSON: <code>GET /findings?stringId=…</code>).</p>
</div>${activity ? `
<h2>Recent events</h2>
<div class="card">
${activityTable(activity)}
</div>` : ''}`
}

export function createOperatorRouter(deps: { config: Config; tokens: TokenManager; activity?: () => Promise<ActivityEntry[]>; held?: () => HeldOrganizationView[]; backlog?: () => BacklogView[]; guard?: Middleware }): Router {
  const router = new Router({ sensitive: true, strict: true })
  router.get('/', deps.guard ?? (async (_ctx, next) => next()), async (ctx) => {
    const orgs = await deps.tokens.status()
    const activity = deps.activity ? await deps.activity() : undefined
    sendPage(ctx, deps.config, 200, 'Organizations', renderOperatorPage(deps.config, orgs, Date.now(), activity, deps.held?.() ?? [], deps.backlog?.()))
  })
  // The organizations as JSON, for monitoring: what /healthz showed to anyone before, now behind
  // the operator password.
  router.get('/operator/organizations', deps.guard ?? (async (_ctx, next) => next()), async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { organizations: await deps.tokens.status() }
  })
  return router
}
