// Every answer of the worker carries `X-Content-Type-Options: nosniff`: the settings routes'
// errors (text for the page, JSON for the service's callbacks) and the operator pages' refusals
// had it not, while the pages themselves and the logos did.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Keyv from 'keyv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.js'
import type { FindingsLog } from '../../src/findings/findings-log.js'
import { createApp } from '../../src/server/app.js'
import { createFindingsRouter } from '../../src/server/findings-routes.js'
import { operatorAuth } from '../../src/server/operator-auth.js'
import { createSettingsRouter } from '../../src/settings/settings-routes.js'
import { SettingsService } from '../../src/settings/settings-service.js'
import { silentLogger } from '../../src/util/logger.js'
import { createMetrics } from '../../src/util/metrics.js'
import { CLIENT_ID, CLIENT_SECRET, makeTarget, ORG, signToken } from '../settings/helpers.js'

let server: Server
let url: string
beforeAll(async () => {
  const config = loadConfig({}, { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, storeUrl: 'memory://', operatorPassword: 'operator' })
  const targets = new Map([['qa-gate', makeTarget('qa-gate')]])
  const app = createApp({
    log: silentLogger(),
    metrics: createMetrics({ defaults: false }),
    webhook: async () => undefined,
    health: async () => ({ status: 'ok' }),
    ready: async () => ({ ready: true, checks: {} }),
    manifest: () => ({}),
    logo: () => undefined,
    routers: [
      createSettingsRouter({ config, settings: new SettingsService(new Keyv(), silentLogger()), pipelines: () => targets, log: silentLogger() }),
      // Refused by the guard before the log is read.
      createFindingsRouter({ config, findings: {} as FindingsLog, guard: operatorAuth(config, silentLogger()) }),
    ],
  })
  server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

async function answer(path: string, init: RequestInit = {}): Promise<{ status: number; type: string | null; nosniff: string | null }> {
  const res = await fetch(`${url}${path}`, init)
  await res.arrayBuffer()
  return { status: res.status, type: res.headers.get('content-type'), nosniff: res.headers.get('x-content-type-options') }
}

const json = (body: unknown, token?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body),
})

describe('X-Content-Type-Options: nosniff', () => {
  it('on the settings page\'s errors (text)', async () => {
    expect(await answer('/steps/qa-gate/settings')).toEqual({ status: 401, type: expect.stringMatching(/^text\/plain/), nosniff: 'nosniff' })
    const token = await signToken({ module: 'gone' })
    expect(await answer(`/steps/gone/settings?jwtToken=${token}`)).toEqual({ status: 404, type: expect.stringMatching(/^text\/plain/), nosniff: 'nosniff' })
  })

  it('on the settings callbacks\' errors (JSON)', async () => {
    const body = { organizationId: Number(ORG), projectId: 7, workflowId: 11, stepId: 41, settings: { tone: 'shouting' } }
    expect(await answer('/steps/qa-gate/settings', json(body))).toEqual({ status: 401, type: expect.stringMatching(/^application\/json/), nosniff: 'nosniff' })
    expect(await answer('/steps/qa-gate/settings', json(body, await signToken()))).toEqual({ status: 400, type: expect.stringMatching(/^application\/json/), nosniff: 'nosniff' })
  })

  it('on the settings callbacks\' answers', async () => {
    const body = { organizationId: Number(ORG), projectId: 7, workflowId: 11, stepId: 41, settings: { tone: 'formal' } }
    expect(await answer('/steps/qa-gate/settings', json(body, await signToken()))).toEqual({ status: 200, type: expect.stringMatching(/^application\/json/), nosniff: 'nosniff' })
  })

  it('on the operator pages\' refusals, and on an address the worker does not serve', async () => {
    expect(await answer('/findings?stringId=1')).toEqual({ status: 401, type: expect.stringMatching(/^text\/plain/), nosniff: 'nosniff' })
    expect((await answer('/nowhere')).nosniff).toBe('nosniff')
  })

  // Koa answers an error that escapes the error middleware itself (one of sending the answer, once
  // the routes are done: here a body JSON.stringify refuses) and removes every header set before:
  // nosniff went, and a stopping worker's Connection: close with it.
  it("on Koa's own answer to an error of sending the answer, after the routes", async () => {
    const app = createApp({
      log: silentLogger(),
      metrics: createMetrics({ defaults: false }),
      webhook: async () => undefined,
      health: async () => ({ status: 'ok', uptime: 1n }),
      ready: async () => ({ ready: true, checks: {} }),
      manifest: () => ({}),
      logo: () => undefined,
      closing: () => true,
    })
    const own = app.listen(0, '127.0.0.1')
    await new Promise((r) => own.once('listening', r))
    try {
      const res = await fetch(`http://127.0.0.1:${(own.address() as AddressInfo).port}/healthz`)
      await res.arrayBuffer()
      expect(res.status).toBe(500)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('connection')).toBe('close')
    } finally {
      own.closeAllConnections()
      await new Promise<void>((r) => own.close(() => r()))
    }
  })
})
