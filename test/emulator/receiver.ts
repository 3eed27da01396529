// A tiny webhook receiver for the emulator's tests: records raw bodies and headers, answers
// with whatever the test queues (default 200).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received { raw: Buffer; headers: IncomingHttpHeaders }

export interface Receiver {
  url: string
  received: Received[]
  /** Answers for the next requests: a status, or [status, headers]. */
  answers: Array<number | [number, Record<string, string>]>
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  const answers: Receiver['answers'] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers })
      const answer = answers.shift() ?? 200
      const [status, headers] = Array.isArray(answer) ? answer : [answer, {}]
      res.writeHead(status, headers).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    answers,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
