// A webhook handler alone in a bare Koa app on 127.0.0.1 (a port the OS picks), answering its
// refusals as the worker's app does: status, headers (Retry-After), and { code, message, expose }.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Middleware } from 'koa'

export async function serveHandler(handler: Middleware): Promise<{ url: string; server: http.Server; close(): Promise<void> }> {
  const app = new Koa()
  // A sender that hangs up mid-body makes its request fail after the answer is decided; Koa would
  // print that to stderr (the handler's answers are all caught below).
  app.silent = true
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      const e = error as { status?: number; code?: string; message: string; expose?: boolean; headers?: Record<string, string> }
      ctx.status = e.status ?? 500
      if (e.headers) ctx.set(e.headers)
      ctx.body = { code: e.code, message: e.message, expose: e.expose }
    }
  })
  app.use(handler)
  const server = http.createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections() // a body refused unread holds its connection until the client gives up
    })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, server, close }
}
