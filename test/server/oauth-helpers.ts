// Shared by the OAuth flow tests: a worker with only the OAuth and operator routes on a loopback
// port, and a "browser" made of fetch with manual redirects and one cookie jar.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Keyv from 'keyv'
import Koa from 'koa'
import { loadConfig, type Config } from '../../src/config/load-config.js'
import { TokenManager } from '../../src/platform/token-manager.js'
import { createOAuthRouter } from '../../src/server/oauth-routes.js'
import { createOperatorRouter } from '../../src/server/operator-page.js'
import { createLogger } from '../../src/util/logger.js'

export interface TestWorker {
  url: string
  config: Config
  tokens: TokenManager
  tokenStore: Keyv
  stateStore: Keyv
  clock: { now: number; real: boolean }
  /** Every log line written, to check that no token reaches the log. */
  logText(): string
  close(): Promise<void>
}

export async function startTestWorker(
  overrides: Partial<Config> | ((workerUrl: string) => Partial<Config> | Promise<Partial<Config>>),
  opts: { fetch?: typeof fetch; stateStore?: Keyv } = {},
): Promise<TestWorker> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const extra = typeof overrides === 'function' ? await overrides(url) : overrides
  const config = loadConfig({}, { baseUrl: url, storeUrl: 'memory://', clientId: 'switchyard-test', clientSecret: 'test-client-secret', ...extra })
  const lines: string[] = []
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } })
  const tokenStore = new Keyv()
  const stateStore = opts.stateStore ?? new Keyv()
  const clock = { now: Date.now(), real: true }
  const tokens = await TokenManager.create({
    config,
    store: tokenStore,
    log,
    now: () => (clock.real ? Date.now() : clock.now),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  })
  const app = new Koa()
  const oauth = createOAuthRouter({ config, tokens, store: stateStore, log })
  const operator = createOperatorRouter({ config, tokens })
  app.use(oauth.routes()).use(oauth.allowedMethods()).use(operator.routes()).use(operator.allowedMethods())
  server.on('request', app.callback())
  return {
    url,
    config,
    tokens,
    tokenStore,
    stateStore,
    clock,
    logText: () => lines.join(''),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The name=value part of our state cookie from a response, if it set one. */
export function stateCookieOf(res: Response): string | undefined {
  for (const c of res.headers.getSetCookie()) {
    const first = c.split(';')[0]!
    if (first.startsWith('switchyard_oauth=') && first !== 'switchyard_oauth=') return first
  }
  return undefined
}

export interface BrowserRun {
  start: Response
  cookie: string | undefined
  authorizeUrl: URL
  /** The URL the authorization server sent the browser back to (the callback), when it did. */
  callbackUrl: URL | undefined
  authorize: Response
  callback: Response | undefined
  callbackBody: string
}

/** Play the browser: /oauth/start, the authorization server, then the callback with the cookie. */
export async function browserConnect(
  workerUrl: string,
  domain: string,
  opts: { cookie?: string; mutateCallback?: (url: URL) => void; authorizeHeaders?: Record<string, string> } = {},
): Promise<BrowserRun> {
  const start = await fetch(`${workerUrl}/oauth/start?domain=${encodeURIComponent(domain)}`, { redirect: 'manual' })
  const cookie = opts.cookie ?? stateCookieOf(start)
  const authorizeUrl = new URL(start.headers.get('location') ?? 'about:blank')
  const authorize = await fetch(authorizeUrl, { redirect: 'manual', headers: opts.authorizeHeaders ?? {} })
  const location = authorize.headers.get('location')
  const callbackUrl = location ? new URL(location, authorizeUrl) : undefined
  let callback: Response | undefined
  let callbackBody = ''
  if (callbackUrl) {
    opts.mutateCallback?.(callbackUrl)
    callback = await fetch(callbackUrl, { redirect: 'manual', headers: cookie ? { cookie } : {} })
    callbackBody = await callback.text()
  }
  return { start, cookie, authorizeUrl, callbackUrl, authorize, callback, callbackBody }
}
