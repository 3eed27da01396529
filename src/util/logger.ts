// One logger for the whole worker: pino, JSON lines, secrets redacted by path so that a token
// can't reach a log line through a careless `log.info({ headers })`.
import { pino, type Logger as PinoLogger, type LoggerOptions, type DestinationStream } from 'pino'

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
}

export function createLogger(setup: LoggerSetup = {}): Logger {
  const options: LoggerOptions = {
    name: setup.name ?? 'switchyard',
    level: setup.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  }
  return setup.destination ? pino(options, setup.destination) : pino(options)
}

/** A logger that writes nothing, for tests and dry runs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
