// The baseline for ingest: a plain node:http server that does the least a correct receiver must
// do (read the body, check the HMAC in constant time, parse the JSON) and answers 200. Run as its
// own process by `switchyard bench`; prints `{"url": ...}` on stdout once listening.
import { timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { signatureBytes } from '../protocol/webhook-signature.js'

export function startBaselineServer(secret: string, signatureHeader = 'x-service-signature'): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const given = Buffer.from(String(req.headers[signatureHeader] ?? '').replace(/^sha256=/, ''), 'hex')
      const expected = signatureBytes(body, secret)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        res.writeHead(401).end()
        return
      }
      let events: unknown
      try {
        events = (JSON.parse(body.toString('utf8')) as { events?: unknown[] }).events
      } catch {
        res.writeHead(400).end()
        return
      }
      const n = Array.isArray(events) ? events.length : 0
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"accepted":${n}}`)
    })
  })
  server.keepAliveTimeout = 65_000
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))
if (isMain) {
  const secret = process.env.APP_SECRET ?? ''
  void startBaselineServer(secret).then((server) => {
    const { port } = server.address() as AddressInfo
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/webhooks` })}\n`)
    process.on('SIGTERM', () => server.close(() => process.exit(0)))
  })
}
