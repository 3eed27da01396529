import { describe, expect, it } from 'vitest'
import { runEmulate, startEmulator } from '../../src/emulator/index.js'

describe('startEmulator', () => {
  it('mounts extra middleware under a prefix (the fake OpenAI endpoint goes under /v1)', async () => {
    const emu = await startEmulator({
      strings: 1,
      mounts: [
        { path: '/v1', middleware: async (ctx) => void (ctx.body = { path: ctx.path }) },
        { path: '/strip', stripPrefix: true, middleware: async (ctx) => void (ctx.body = { path: ctx.path }) },
      ],
    })
    try {
      expect(await (await fetch(`${emu.url}/v1/chat/completions`)).json()).toEqual({ path: '/v1/chat/completions' })
      expect(await (await fetch(`${emu.url}/strip/models`)).json()).toEqual({ path: '/models' })
      expect((await fetch(`${emu.url}/v10/x`)).status).toBe(404)
    } finally {
      await emu.stop()
    }
  })

  it('binds to 127.0.0.1 on a free port and reports what to configure', async () => {
    const emu = await startEmulator({ strings: 5, clientId: 'c', clientSecret: 's', appSecret: 'a' })
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(emu.info()).toMatchObject({ authUrl: emu.url, apiUrl: emu.url, clientId: 'c', clientSecret: 's', appSecret: 'a', moduleKey: 'qa-gate', strings: 5 })
    } finally {
      await emu.stop()
    }
  })

  it('refuses an unsupported language at start', async () => {
    await expect(startEmulator({ languages: ['xx'] })).rejects.toThrow(/no sample translations/)
  })
})

describe('runEmulate', () => {
  it('prints help and refuses unknown flags', async () => {
    const out: string[] = []
    const write = process.stdout.write.bind(process.stdout)
    const errWrite = process.stderr.write.bind(process.stderr)
    process.stdout.write = ((chunk: string) => (out.push(chunk), true)) as typeof process.stdout.write
    process.stderr.write = ((chunk: string) => (out.push(chunk), true)) as typeof process.stderr.write
    try {
      expect(await runEmulate(['--help'])).toBe(0)
      expect(await runEmulate(['--bogus'])).toBe(2)
    } finally {
      process.stdout.write = write
      process.stderr.write = errWrite
    }
    expect(out.join('')).toMatch(/--port N/)
  })

  it('runs until SIGTERM, printing the URLs and the secrets to configure the worker with', async () => {
    let output = ''
    const write = process.stdout.write.bind(process.stdout)
    process.stdout.write = ((chunk: string) => ((output += chunk), true)) as typeof process.stdout.write
    let exit: Promise<number>
    try {
      exit = runEmulate(['--port', '0', '--strings', '10', '--app-secret', 'app-s'])
      for (let i = 0; i < 200 && !output.includes('Ctrl+C'); i++) await new Promise((r) => setTimeout(r, 25))
    } finally {
      process.stdout.write = write
    }
    expect(output).toMatch(/AUTH_URL=http:\/\/127\.0\.0\.1:\d+/)
    expect(output).toMatch(/APP_SECRET=app-s/)
    expect(output).toMatch(/CLIENT_SECRET=emulator-client-secret/)
    const url = /API_URL=(\S+)/.exec(output)![1]!
    expect(((await (await fetch(`${url}/_control/info`)).json()) as { strings: number }).strings).toBe(10)
    // The command's own SIGTERM listener is what stops it; emit instead of killing the test process.
    process.emit('SIGTERM')
    expect(await exit!).toBe(0)
    await expect(fetch(`${url}/_control/info`)).rejects.toThrow()
  })

  it('takes more organizations as ID:DOMAIN:SECRET and prints the per-organization API_URL and APP_SECRET', async () => {
    let output = ''
    const write = process.stdout.write.bind(process.stdout)
    const errWrite = process.stderr.write.bind(process.stderr)
    process.stdout.write = ((chunk: string) => ((output += chunk), true)) as typeof process.stdout.write
    process.stderr.write = ((chunk: string) => ((output += chunk), true)) as typeof process.stderr.write
    let exit: Promise<number>
    try {
      expect(await runEmulate(['--organization', 'nodomain'])).toBe(2)
      exit = runEmulate(['--port', '0', '--strings', '5', '--app-secret', 'app-s', '--organization', '300000:globex:s2', '--quiet'])
      for (let i = 0; i < 200 && !output.includes('Ctrl+C'); i++) await new Promise((r) => setTimeout(r, 25))
    } finally {
      process.stdout.write = write
      process.stderr.write = errWrite
    }
    expect(output).toMatch(/ID:DOMAIN:SECRET/)
    expect(output).toMatch(/APP_SECRET=200000=app-s,300000=s2/)
    const template = /API_URL=(\S+)/.exec(output)![1]!
    expect(template).toMatch(/\/o\/\{organization_domain\}$/)
    const base = template.replace('/o/{organization_domain}', '')
    const orgs = (await (await fetch(`${base}/_control/organizations`)).json()) as Array<{ domain: string; projectId: number }>
    expect(orgs.map((o) => [o.domain, o.projectId])).toEqual([['acme', 42], ['globex', 142]])
    process.emit('SIGTERM')
    expect(await exit!).toBe(0)
  })
})

describe("the banner's worker settings", () => {
  it('name a loopback HOST, the port webhooks go to and the BASE_URL of the registered redirect URI', async () => {
    const { workerAddressLines } = await import('../../src/emulator/run-emulate.js')
    // The defaults: a worker on its default HOST (0.0.0.0) answered 403 on the operator page.
    expect(workerAddressLines('http://localhost:3000/oauth/callback', 'http://127.0.0.1:3000/webhooks')).toEqual([
      expect.stringMatching(/^ {2}HOST=127\.0\.0\.1 /),
      '  PORT=3000',
      '  BASE_URL=http://localhost:3000',
    ])
    expect(workerAddressLines('http://127.0.0.1:13000/sub/oauth/callback', 'http://127.0.0.1:13000/webhooks').slice(1)).toEqual(['  PORT=13000', '  BASE_URL=http://127.0.0.1:13000/sub'])
    expect(workerAddressLines(undefined, null)).toHaveLength(1)
  })
})
