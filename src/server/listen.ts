// The HTTP server with timeouts that fit the service: it waits 30 s for an answer to a webhook,
// so a request that has not arrived by then is of no use to it, and only holds memory and a
// socket here. Node's defaults (300 s per request, timeouts checked every 30 s) let a slow upload
// keep a body buffer for five minutes.
import { createServer, type RequestListener, type Server } from 'node:http'
import { once } from 'node:events'

export interface ListenOptions {
  port: number
  host: string
  headersTimeoutMs: number
  requestTimeoutMs: number
}

export async function listen(handler: RequestListener, o: ListenOptions): Promise<Server> {
  const server = createServer(
    {
      headersTimeout: o.headersTimeoutMs,
      requestTimeout: o.requestTimeoutMs,
      // How often Node looks for requests past those timeouts: often enough that a deadline is
      // kept to within a second (or a tenth of the shorter timeout).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(o.headersTimeoutMs / 10))),
    },
    handler,
  )
  server.listen(o.port, o.host)
  await once(server, 'listening')
  return server
}
