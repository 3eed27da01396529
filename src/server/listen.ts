// The HTTP server with timeouts that fit the service: it waits 30 s for an answer to a webhook,
// so a request that has not arrived by then is of no use to it, and only holds memory and a
// socket here. Node's defaults (300 s per request, timeouts checked every 30 s) let a slow upload
// keep a body buffer for five minutes.
import { createServer, type RequestListener, type Server } from 'node:http'
import { once } from 'node:events'
import { answerClientError } from './client-error.js'

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
  // Node's own refusals (400, 408, 413, 431), with the headers every answer of the worker carries.
  server.on('clientError', answerClientError)
  server.listen(o.port, o.host)
  try {
    await once(server, 'listening')
  } catch (error) {
    throw listenError(error, o)
  }
  return server
}

/**
 * Why the worker could not listen, naming the settings to change: Node's own message
 * (`listen EADDRINUSE: address already in use 127.0.0.1:3000`, `getaddrinfo ENOTFOUND ...`) names
 * neither PORT nor HOST.
 */
export function listenError(error: unknown, o: Pick<ListenOptions, 'port' | 'host'>): Error {
  const code = (error as NodeJS.ErrnoException).code
  const hint =
    code === 'EADDRINUSE' ? 'another process listens there: stop it, or set PORT to a free port'
    : code === 'EACCES' ? 'a port below 1024 needs privileges: set PORT to 1024 or above'
    : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'HOST must be an address of this machine (0.0.0.0: every address; 127.0.0.1: this host only)'
    : undefined
  const message = `cannot listen on HOST=${o.host} PORT=${o.port}: ${(error as Error).message}${hint ? `; ${hint}` : ''}`
  return Object.assign(new Error(message, { cause: error }), code ? { code } : {})
}
