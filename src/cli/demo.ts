// `switchyard demo`: the main job on embedded defaults with no account anywhere. The emulated
// service and the worker start on loopback, the worker is connected to the emulated organization
// through the real OAuth flow (PKCE), the sample project's strings are sent as signed batches, and
// a table shows how many strings went to which output port, per language.
// Of the environment it reads only how to log (demoEnv): the shell of someone who also runs a real
// worker holds QUEUE=bullmq, STORE_URL, OPERATOR_PASSWORD and the like, which made the demo need
// Redis, or refused its own connection to the worker.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../config/load-config.js'
import { startEmulator, type Emulator } from '../emulator/index.js'
import { createLogger } from '../util/logger.js'
import { startServe } from './serve.js'
import { freePort } from '../util/free-port.js'

interface DemoOptions {
  strings: number
  languages: string[]
  batchSize: number
  pipeline: string
  keep: boolean
}

function parseArgs(args: string[]): DemoOptions | string {
  const o: DemoOptions = { strings: 600, languages: ['de', 'fr', 'ja'], batchSize: 100, pipeline: 'qa-gate', keep: false }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const value = () => args[++i] ?? ''
    if (a === '--strings') o.strings = Number(value())
    else if (a === '--languages') o.languages = value().split(',').filter(Boolean)
    else if (a === '--batch-size') o.batchSize = Number(value())
    else if (a === '--pipeline') o.pipeline = value()
    else if (a === '--keep') o.keep = true
    else return `unknown option ${a}`
  }
  if (!Number.isInteger(o.strings) || o.strings < 1) return '--strings takes a whole number'
  return o
}


/** The browser's part of the OAuth flow, done with fetch: follow redirects by hand, keep the cookie. */
export async function connectThroughBrowser(workerUrl: string, domain: string): Promise<void> {
  const start = await fetch(`${workerUrl}/oauth/start?domain=${encodeURIComponent(domain)}`, { redirect: 'manual' })
  const cookie = (start.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ')
  const authorize = start.headers.get('location')
  if (start.status !== 302 || !authorize) throw new Error(`/oauth/start answered ${start.status}: ${(await start.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`)
  const consent = await fetch(authorize, { redirect: 'manual' })
  const callback = consent.headers.get('location')
  if (!callback) throw new Error(`the authorization server answered ${consent.status} without a redirect`)
  const done = await fetch(callback, { headers: { cookie }, redirect: 'manual' })
  if (done.status >= 400) throw new Error(`/oauth/callback answered ${done.status}: ${(await done.text()).slice(0, 200)}`)
}

/** The variables the demo takes from the environment: how its log looks, nothing that changes what it runs on. */
const DEMO_ENV = ['LOG_LEVEL', 'LOG_FORMAT'] as const

/** The environment the demo's worker is configured from: embedded defaults, the log as asked. */
function demoEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const taken: Record<string, string | undefined> = Object.fromEntries(DEMO_ENV.map((name) => [name, env[name]]))
  return { ...taken, LOG_LEVEL: taken.LOG_LEVEL ?? 'error' }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n')
}

export async function runDemo(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    console.log('switchyard demo [--strings N] [--languages de,fr,ja] [--batch-size N] [--pipeline qa-gate|ai-proofread] [--keep]')
    return 0
  }
  const options = parseArgs(args)
  if (typeof options === 'string') {
    console.error(`switchyard demo: ${options}`)
    return 2
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-demo-'))
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  let emu: Emulator | undefined
  let running: Awaited<ReturnType<typeof startServe>> | undefined
  try {
    emu = await startEmulator({
      strings: options.strings,
      languages: options.languages,
      moduleKey: options.pipeline,
      redirectUris: [`${baseUrl}/oauth/callback`],
      seed: 42,
      settings: { retries: 8 },
    })
    const info = emu.info()
    const config = loadConfig(
      demoEnv(process.env),
      {
        port, host: '127.0.0.1', baseUrl,
        appSecrets: [info.appSecret], clientId: info.clientId, clientSecret: info.clientSecret,
        authUrl: info.authUrl, apiUrl: info.apiUrl,
        dataDir, storeUrl: `sqlite://${path.join(dataDir, 'switchyard.sqlite')}`,
        openaiApiKey: 'demo-key', openaiBaseUrl: `${emu.url}/v1`,
        reconcileIntervalMs: 0,
      },
    )
    running = await startServe(config, createLogger({ level: config.logLevel, format: config.logFormat }))
    // Before any string is sent: a pipeline that is not there would park every one of them.
    const pipelines = running.host.current
    if (!pipelines.get(options.pipeline)) {
      console.error(`switchyard demo: there is no pipeline "${options.pipeline}"; --pipeline takes one of: ${pipelines.all().map((p) => p.key).join(', ')}`)
      return 2
    }
    console.log(`Emulated service  ${emu.url}  (organization "${info.organization.domain}", project ${info.projectId}, step ${info.stepId} -> pipeline "${options.pipeline}")`)
    console.log(`Worker            ${baseUrl}  (store: SQLite in ${dataDir})`)
    await connectThroughBrowser(baseUrl, info.organization.domain)
    console.log(`Connected         organization "${info.organization.domain}" through OAuth (authorization code + PKCE)`)
    emu.configure({ webhookUrl: `${baseUrl}/webhooks` })
    const started = performance.now()
    const report = await emu.sendPending({ batchSize: options.batchSize, parallel: 4 })
    await running.worker.idle(120_000)
    const seconds = (performance.now() - started) / 1000
    const summary = emu.summary()
    const ports = [...new Set(Object.values(summary.languages).flatMap((l) => Object.keys(l.byOutput)))].sort()
    const rows = [['language', 'strings', ...ports.map((p) => (p === '' ? '(parked)' : `-> ${p}`)), 'as expected']]
    for (const [lang, l] of Object.entries(summary.languages)) {
      const expectedOk = l.total - emu.statuses({ languageId: lang, wrong: true }).length - (l.total - (l.byStatus.DONE ?? 0))
      rows.push([lang, String(l.total), ...ports.map((p) => String(l.byOutput[p] ?? 0)), `${expectedOk}/${l.total}`])
    }
    console.log(`\nSent ${report.events} strings in ${report.batches} signed batches; all processed in ${seconds.toFixed(1)} s.\n`)
    console.log(table(rows))
    const patches = emu.requestCount('PATCH /api/v2/projects/:projectId/workflow-steps/:stepId/languages/:languageId/status')
    const mistakes = emu.mistakes()
    console.log(`\nStatus updates: ${summary.patchOperations} strings in ${patches} PATCH requests. Not done: ${summary.notDone}. Wrong port: ${summary.wrongOutput}. Protocol mistakes: ${mistakes.length}.`)
    for (const m of mistakes.slice(0, 5)) console.log(`  mistake: ${m.kind} ${m.path}: ${m.detail}`)
    const model = emu.openai?.stats()
    if (model && model.requests > 0) {
      console.log(`Model (fake, OpenAI-compatible): ${model.requests} requests for ${model.items} strings, ${model.tokensIn} tokens in, ${model.tokensOut} out.`)
    }
    const broken = emu.statuses({ output: 'translated' }).slice(0, 3)
    if (broken.length) {
      console.log('\nA few strings sent back to translation (the sample plants one defect in some translations):')
      for (const s of broken) console.log(`  string ${s.stringId} (${s.languageId}): ${s.defect ?? 'flagged'}`)
    }
    return summary.notDone === 0 && summary.wrongOutput === 0 && mistakes.length === 0 ? 0 : 1
  } finally {
    await running?.stop().catch(() => undefined)
    await emu?.stop().catch(() => undefined)
    if (!options.keep) rmSync(dataDir, { recursive: true, force: true })
  }
}
