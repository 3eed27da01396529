// `switchyard emulate`: the fake service alone, on a fixed port, until SIGINT/SIGTERM. Prints
// what to configure the worker with and how to drive the emulator from another shell.
import { parseArgs } from 'node:util'
import { createLogger } from '../util/logger.js'
import { startEmulator, type EmulatorOptions } from './start-emulator.js'

const USAGE = `Usage: switchyard emulate [options]

Runs a fake of the localization service (OAuth, string-status API, translations, webhook sender).

Options:
  --port N              Port to listen on (default 8090; 0: any free port)
  --host ADDR           Address to bind (default 127.0.0.1)
  --strings N           Sample strings (default 200)
  --languages de,fr     Target languages: de, fr, ja, ar, ru (default de,fr)
  --seed N              Seed of the sample project (default 1)
  --defect-rate F       Fraction of translations with one defect (default 0.2)
  --webhook-url URL     Where webhook batches go (default http://127.0.0.1:3000/webhooks)
  --send-interval MS    Send NEED_PROCESS strings every MS milliseconds (default: only on request)
  --client-id ID        OAuth client id (default switchyard-emulator)
  --client-secret S     OAuth client secret (default emulator-client-secret)
  --app-secret S        app_secret that signs webhooks (default emulator-app-secret)
  --redirect-uri URL    Registered redirect URI; repeat for several (default http://localhost:3000/oauth/callback)
  --module-key KEY      Module key of the step (default qa-gate)
  --header-prefix P     Webhook header prefix (default X-Service-)
  --organization ID:DOMAIN:SECRET
                        One more organization (its id, domain and app_secret); repeat for several.
                        Each is reached at <url>/o/<domain>; the first keeps the plain routes too
  --json                Print one JSON line with the emulator's info (url, ids, secrets) instead
                        of the banner, for a parent process (switchyard bench) to read
  --quiet               Log only warnings and errors
  -h, --help            This help`

/**
 * Where the worker must listen and what it must call itself for the emulator to reach it: the
 * webhook URL's port, the registered redirect URI's origin, and a loopback HOST. On the worker's
 * default HOST (0.0.0.0) the operator page and /oauth/start answer 403 without OPERATOR_PASSWORD,
 * so a worker configured from the lines below alone could not be connected.
 */
export function workerAddressLines(redirectUri: string | undefined, webhookUrl: string | null): string[] {
  const lines = ['  HOST=127.0.0.1   (on loopback the operator page and /oauth/start need no OPERATOR_PASSWORD)']
  const webhook = webhookUrl ? URL.parse(webhookUrl) : null
  if (webhook?.port) lines.push(`  PORT=${webhook.port}`)
  const redirect = redirectUri ? URL.parse(redirectUri) : null
  if (redirect && redirect.pathname.endsWith('/oauth/callback')) {
    lines.push(`  BASE_URL=${redirect.origin}${redirect.pathname.slice(0, -'/oauth/callback'.length)}`)
  }
  return lines
}

export async function runEmulate(args: string[]): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({
      args,
      strict: true,
      options: {
        port: { type: 'string', default: '8090' },
        host: { type: 'string', default: '127.0.0.1' },
        strings: { type: 'string' },
        languages: { type: 'string' },
        seed: { type: 'string' },
        'defect-rate': { type: 'string' },
        'webhook-url': { type: 'string', default: 'http://127.0.0.1:3000/webhooks' },
        'send-interval': { type: 'string' },
        'client-id': { type: 'string', default: 'switchyard-emulator' },
        'client-secret': { type: 'string', default: 'emulator-client-secret' },
        'app-secret': { type: 'string', default: 'emulator-app-secret' },
        'redirect-uri': { type: 'string', multiple: true },
        'module-key': { type: 'string' },
        'header-prefix': { type: 'string' },
        organization: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const number = (name: string, raw: string | undefined): number | undefined => {
    if (raw === undefined) return undefined
    const n = Number(raw)
    if (!Number.isFinite(n)) throw new Error(`--${name} must be a number, got "${raw}"`)
    return n
  }
  let emulatorOptions: EmulatorOptions
  let sendInterval: number | undefined
  try {
    emulatorOptions = {
      host: values.host,
      port: number('port', values.port)!,
      clientId: values['client-id'],
      clientSecret: values['client-secret'],
      appSecret: values['app-secret'],
      webhookUrl: values['webhook-url'],
      logger: createLogger({ name: 'emulator', ...(values.quiet ? { level: 'warn' } : {}) }),
      ...(values['redirect-uri'] ? { redirectUris: values['redirect-uri'] } : {}),
      ...(values.strings ? { strings: number('strings', values.strings)! } : {}),
      ...(values.seed ? { seed: number('seed', values.seed)! } : {}),
      ...(values['defect-rate'] ? { defectRate: number('defect-rate', values['defect-rate'])! } : {}),
      ...(values.languages ? { languages: values.languages.split(',').map((l) => l.trim()).filter(Boolean) } : {}),
      ...(values['module-key'] ? { moduleKey: values['module-key'] } : {}),
      ...(values['header-prefix'] ? { headerPrefix: values['header-prefix'] } : {}),
      ...(values.organization
        ? {
            organizations: values.organization.map((spec) => {
              const [id, domain, ...secret] = spec.split(':')
              if (!id || !domain || secret.length === 0) throw new Error(`--organization must be ID:DOMAIN:SECRET, got "${spec}"`)
              return { id, domain, appSecret: secret.join(':') }
            }),
          }
        : {}),
    }
    sendInterval = number('send-interval', values['send-interval'])
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    return 2
  }

  let emulator
  try {
    emulator = await startEmulator(emulatorOptions)
  } catch (error) {
    process.stderr.write(`switchyard emulate: ${(error as Error).message}\n`)
    return 1
  }
  const info = emulator.info()
  if (values.json) process.stdout.write(`${JSON.stringify(info)}\n`)
  else process.stdout.write(
    [
      `Emulated localization service at ${info.url}`,
      '',
      'Configure the worker with:',
      ...workerAddressLines(info.redirectUris[0], emulator.settings.webhookUrl),
      `  AUTH_URL=${info.authUrl}`,
      `  API_URL=${info.organizations.length > 1 ? info.apiUrlTemplate : info.apiUrl}`,
      `  CLIENT_ID=${info.clientId}`,
      `  CLIENT_SECRET=${info.clientSecret}`,
      `  APP_SECRET=${info.organizations.length > 1 ? info.organizations.map((o) => `${o.id}=${o.appSecret}`).join(',') : info.appSecret}`,
      `  HEADER_PREFIX=${info.headerPrefix}`,
      ...(emulator.openai ? [`  OPENAI_BASE_URL=${info.url}/v1   OPENAI_API_KEY=any   (the fake model, for ai-proofread)`] : []),
      `  (registered redirect URIs: ${info.redirectUris.join(', ')})`,
      '',
      `Organization ${info.organization.id} (${info.organization.domain}), project ${info.projectId}, step ${info.stepId} (module ${info.moduleKey}),`,
      `${info.strings} strings in ${info.languages.join(', ')}; outputs ${info.outputs.join(', ')}.`,
      ...info.organizations.slice(1).map((o) => `Organization ${o.id} (${o.domain}) at ${o.apiUrl}: project ${o.projectId}, step ${o.stepId}, ${o.strings} strings in ${o.languages.join(', ')}.`),
      `Webhooks go to ${emulator.settings.webhookUrl}${sendInterval ? ` every ${sendInterval} ms` : ' on request'}.`,
      '',
      `Control API (JSON) at ${info.controlUrl}:`,
      '  GET  /info  /settings  /summary  /statuses?languageId=&status=&output=&wrong=true  /strings  /requests  /deliveries',
      '  POST /settings {webhookUrl, approve, faults: {...}}  /seed {strings, languages, seed}  /send {stringIds?, languageIds?}',
      '  POST /send-events {events}  /send-raw {body, headers}  /resend  /authorize  /expire-tokens  /reset-counters  /auto-send {intervalMs}',
      '  POST /send-back  /revoke {ms}  /restore  /remove-language  /untranslated  /refuse-comments  /organizations  /faults  /editor/save',
      '  GET  /mistakes  /patch-requests  /comments  /organizations   (every one takes an organization: id or domain; default the first)',
      `Example: curl -X POST ${info.controlUrl}/send`,
      '',
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  )
  if (sendInterval) emulator.startAutoSend(sendInterval)

  await new Promise<void>((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done)
      process.off('SIGTERM', done)
      resolve()
    }
    process.on('SIGINT', done)
    process.on('SIGTERM', done)
  })
  await emulator.stop()
  return 0
}
