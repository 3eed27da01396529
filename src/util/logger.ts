// One logger for the whole worker: pino, secrets redacted by path so that a token can't reach a
// log line through a careless `log.info({ headers })`. JSON lines for machines; readable lines
// (pino-pretty, in this thread, synchronously) when a person watches a terminal.
import { pino, type Logger as PinoLogger, type LoggerOptions, type DestinationStream } from 'pino'
import { PinoPretty } from 'pino-pretty'

export type Logger = PinoLogger

/** Field paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'access_token', 'refresh_token', 'accessToken', 'refreshToken', 'token', 'jwt', 'jwtToken',
  'secret', 'appSecret', 'clientSecret', 'client_secret', 'code_verifier', 'codeVerifier', 'code',
  'password', 'apiKey', 'authorization', 'signature',
  '*.access_token', '*.refresh_token', '*.accessToken', '*.refreshToken', '*.token', '*.secret',
  '*.clientSecret', '*.client_secret', '*.apiKey', '*.authorization', '*.Authorization', '*.signature',
  '*.code_verifier', '*.password',
  'headers.authorization', 'headers.cookie', 'req.headers.authorization', 'req.headers.cookie',
  'headers["x-service-signature"]', 'headers["x-crowdin-signature"]',
]

export interface LoggerSetup {
  level?: string
  name?: string
  destination?: DestinationStream
  /** `json`, `pretty`, or `auto` (pretty when stdout is a terminal): LOG_FORMAT by default. */
  format?: string
  /** While this answers true, lines below `error` are dropped (by this logger and its children). */
  muted?: () => boolean
}

/** pino's number of the `error` level: what a muted logger still writes. */
const ERROR_LEVEL = 50

/** Pretty only for a person: asked for, or `auto` with a terminal on stdout. */
export function wantsPretty(format: string | undefined, isTTY: boolean | undefined): boolean {
  if (format === 'pretty') return true
  if (format === 'json') return false
  return isTTY === true
}

export function createLogger(setup: LoggerSetup = {}): Logger {
  const options: LoggerOptions = {
    name: setup.name ?? 'switchyard',
    level: setup.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  }
  const muted = setup.muted
  if (muted) {
    options.hooks = {
      logMethod(args, write, level) {
        if (level < ERROR_LEVEL && muted()) return
        write.apply(this, args)
      },
    }
  }
  if (setup.destination) return pino(options, setup.destination)
  if (wantsPretty(setup.format ?? process.env.LOG_FORMAT, process.stdout.isTTY)) {
    return pino(options, PinoPretty({ sync: true, colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'name' }))
  }
  return pino(options)
}

/** A logger that writes nothing, for tests and dry runs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
