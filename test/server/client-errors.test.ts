// Node answers some requests itself, before the app sees them: a malformed request line (400),
// headers too large (431), a request past its time limit (408). Those answers carried none of the
// headers every other answer of the worker has (X-Content-Type-Options: nosniff); the server the
// worker listens with (listen) writes them with it, and keeps Node's Connection: close.
import { connect } from 'node:net'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Duplex } from 'node:stream'
import { answerClientError, clientErrorResponse } from '../../src/server/client-error.js'
import { listen } from '../../src/server/listen.js'

let server: Server
let port: number
beforeAll(async () => {
  server = await listen((_req, res) => res.end('ok'), { port: 0, host: '127.0.0.1', headersTimeoutMs: 300, requestTimeoutMs: 300 })
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** What the server writes back to `request` (raw bytes), until it closes the connection. */
function exchange(request: string | Buffer, keepOpen = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (c: Buffer) => { answer += c.toString('latin1') })
    socket.on('close', () => resolve(answer))
    socket.on('error', (e) => (answer ? resolve(answer) : reject(e)))
    socket.write(request)
    if (!keepOpen) socket.end()
  })
}

const headersOf = (answer: string) => answer.split('\r\n\r\n')[0]!.split('\r\n')

describe("Node's own refusals", () => {
  it('a malformed request line: 400 with nosniff, connection closed', async () => {
    expect(headersOf(await exchange('NOT A REQUEST\r\n\r\n'))).toEqual(['HTTP/1.1 400 Bad Request', 'Connection: close', 'X-Content-Type-Options: nosniff'])
  })

  it('headers over the limit: 431 with nosniff', async () => {
    // Sent without waiting for more: the whole request before the answer.
    const answer = await exchange(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(headersOf(answer)).toEqual(['HTTP/1.1 431 Request Header Fields Too Large', 'Connection: close', 'X-Content-Type-Options: nosniff'])
  })

  it('headers that do not arrive in time: 408 with nosniff', async () => {
    const answer = await exchange('GET / HTTP/1.1\r\nHost: x\r\n', true)
    expect(headersOf(answer)).toEqual(['HTTP/1.1 408 Request Timeout', 'Connection: close', 'X-Content-Type-Options: nosniff'])
  })

  it('a request that is fine is the app\'s to answer', async () => {
    expect(await exchange('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/)
  })

  it('names the status Node gives each of its refusals', () => {
    expect(clientErrorResponse('HPE_CHUNK_EXTENSIONS_OVERFLOW')).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/)
    expect(clientErrorResponse('HPE_INVALID_METHOD')).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(clientErrorResponse(undefined)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
  })

  // As Node: nothing written to a connection the client reset, to one no longer writable, or
  // where an answer has begun (its headers would be followed by a second status line).
  it('writes nothing where Node writes nothing, and closes the connection every time', () => {
    const socketWith = (writable: boolean, headersSent?: boolean) => {
      const written: string[] = []
      const socket = new Duplex({ read() {}, write(chunk: Buffer, _e, done) { written.push(chunk.toString()); done() } })
      socket.on('error', () => undefined)
      if (!writable) socket.end()
      if (headersSent !== undefined) Object.assign(socket, { _httpMessage: { headersSent } })
      return { socket, written }
    }
    const error = (code: string) => Object.assign(new Error(code), { code })
    for (const [code, writable, headersSent, answered] of [
      ['ECONNRESET', true, undefined, false],
      ['HPE_INVALID_METHOD', false, undefined, false],
      ['ERR_HTTP_REQUEST_TIMEOUT', true, true, false],
      ['ERR_HTTP_REQUEST_TIMEOUT', true, false, true],
      ['HPE_INVALID_METHOD', true, undefined, true],
    ] as const) {
      const { socket, written } = socketWith(writable, headersSent)
      answerClientError(error(code), socket)
      expect(written.length, `${code} writable=${writable} headersSent=${headersSent}`).toBe(answered ? 1 : 0)
      expect(socket.destroyed).toBe(true)
    }
  })
})
