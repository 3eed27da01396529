// Every pipeline thread imports every plugin of its pipelines as it starts: the OpenAI SDK (about
// 86 ms of a thread's CPU) is imported on the plugin's first model request, not with the plugin.
// A child process refuses any import of `openai`, then loads the built plugin and creates an
// instance with a key: neither may need the SDK. Runs the build (dist/).
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { PACKAGE_ROOT } from '../../src/config/load-config.js'

describe('ai-proofread: the SDK is loaded on demand', () => {
  it('loading the plugin and creating an instance import no part of the SDK', () => {
    const plugin = pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'plugins', 'ai-proofread', 'index.js')).href
    const engine = (file: string) => pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'src', 'engine', file)).href
    const hook = 'export async function resolve(s, c, next) { if (s === "openai" || s.startsWith("openai/")) throw new Error("the SDK was imported"); return next(s, c) }'
    const script = `
      import { register } from 'node:module'
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}))
      const { default: plugin } = await import(${JSON.stringify(plugin)})
      const { testContext } = await import(${JSON.stringify(engine('plugin-tester.js'))})
      const { instantiatePlugin } = await import(${JSON.stringify(engine('instantiate-plugin.js'))})
      const instance = await instantiatePlugin(plugin, { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1' }, testContext(plugin))
      console.log(typeof (instance.checkBatch ?? instance.check))`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(run.stderr).not.toMatch(/the SDK was imported/)
    expect(run.stdout.trim(), run.stderr).toBe('function')
  })

  it('an SDK that fails to load fails the request with a clear error, counted; the next request loads it again', () => {
    const client = pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'plugins', 'ai-proofread', 'model-client.js')).href
    const logger = pathToFileURL(path.join(PACKAGE_ROOT, 'dist', 'src', 'util', 'logger.js')).href
    // The first import of the SDK fails (a broken install), later ones resolve.
    const hook = 'let refused = false; export async function resolve(s, c, next) { if (s === "openai" && !refused) { refused = true; throw new Error("cannot find package openai") } return next(s, c) }'
    const script = `
      import { register } from 'node:module'
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}))
      const { ModelClient } = await import(${JSON.stringify(client)})
      const { silentLogger } = await import(${JSON.stringify(logger)})
      const counted = {}
      const metrics = { add: (name, n = 1) => { counted[name] = (counted[name] ?? 0) + n } }
      // A loopback port the OS picked and nothing listens on any more: a loaded SDK fails fast.
      const { createServer } = await import('node:net')
      const server = createServer()
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address()
      await new Promise((resolve) => server.close(resolve))
      const model = new ModelClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:' + port + '/v1', model: 'm', timeoutMs: 2000, maxRetries: 0, retryBaseMs: 1, concurrency: 1, tokensPerHour: 1e9, metrics, log: silentLogger() })
      const request = { sourceLanguage: { name: 'English', code: 'en' }, targetLanguage: { name: 'German', code: 'de' }, instructions: '', items: [] }
      const outcome = (p) => p.then(() => 'answered', (e) => e.name + ': ' + e.message)
      console.log(JSON.stringify({ first: await outcome(model.review(request)), second: await outcome(model.review(request)), counted }))`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    const out = JSON.parse(run.stdout.trim().split('\n').pop() || '{}') as { first: string; second: string; counted: Record<string, number> }
    expect(out.first, run.stderr).toMatch(/^ModelRequestError: ai-proofread: the OpenAI SDK could not be loaded \(.*cannot find package openai.*\)/)
    expect(out.second).toMatch(/^ModelRequestError: ai-proofread: request to m failed \(network error\)/)
    expect(out.counted['ai.errors']).toBe(2)
  })
})
