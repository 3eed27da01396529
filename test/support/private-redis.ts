// A Redis of the test's own (redis-server on a Unix socket in a temporary directory, nothing kept
// on disk), for what the shared one cannot be put through: a small maxmemory, or being stopped.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { redisClient } from '../../src/queue/bullmq-journal.js'

/** redis-server, if installed (it comes with the Redis the suite needs; .ci/run installs it). */
export const redisServer = spawnSync('redis-server', ['--version']).status === 0

export interface PrivateRedis {
  socket: string
  /** Kills it and removes its directory. */
  stop(): void
  /** SIGSTOP: its connections stay open and it answers nothing (a hung or swapping server, a half-open connection). */
  pause(): void
  /** SIGCONT after pause(). */
  resume(): void
}

/** Started and answering PING; `maxmemory` bytes (0: no limit). Killed when the test file ends at the latest. */
export async function startPrivateRedis(maxmemory = 0): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-redis-'))
  const socket = path.join(dir, 'redis.sock')
  const server: ChildProcess = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--save', '', '--appendonly', 'no', '--maxmemory', String(maxmemory), '--maxmemory-policy', 'noeviction', '--dir', dir], { stdio: 'ignore' })
  const kill = () => server.kill('SIGKILL')
  process.once('exit', kill)
  const stop = () => {
    kill()
    process.off('exit', kill)
    rmSync(dir, { recursive: true, force: true })
  }
  let exited: string | undefined
  server.once('exit', (code) => (exited = `redis-server exited with ${code}`)).once('error', (e) => (exited = e.message))
  const client = redisClient(socket)
  // Refused connections until the socket is there: answered by the loop below.
  client.on('error', () => undefined)
  try {
    for (let i = 0; ; i++) {
      if (exited || i > 100) throw new Error(exited ?? 'redis-server did not start')
      if (await Promise.race([client.ping().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))])) break
    }
  } catch (error) {
    stop()
    throw error
  } finally {
    client.disconnect()
  }
  return { socket, stop, pause: () => void server.kill('SIGSTOP'), resume: () => void server.kill('SIGCONT') }
}
