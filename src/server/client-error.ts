// The answer to a request Node refuses before any handler sees it: a malformed request line or
// header (400), headers too large (431), a chunk extension too large (413), a request past its
// time limit (408). Node writes these itself, bare: without the security headers every other
// answer of the worker carries (X-Content-Type-Options: nosniff), which Koa's middleware never
// got the chance to set. Written here as Node writes them, with the header, through the server's
// 'clientError' event (as Node's documentation shows).
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'

/** The status Node gives each of its refusals (its own socketOnError); 400 for any other. */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
}

/** The raw answer: no body, and the connection closed, as Node's. */
export function clientErrorResponse(code: string | undefined): string {
  const status = (code && STATUS_BY_CODE[code]) || 400
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n`
}

/**
 * A 'clientError' listener. Where Node would write nothing, this writes nothing: a connection
 * reset by the client, a socket no longer writable, or one on which an answer has begun (its
 * `_httpMessage`, Node's own test, as a public one there is not); the socket is destroyed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) socket.write(clientErrorResponse(error.code))
  socket.destroy(error)
}
