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
})
