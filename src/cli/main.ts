// The `switchyard` command. Each subcommand lives in its own module, loaded only when used, so
// `switchyard validate` doesn't pay for the server, and the production image can leave out the
// emulator and the bench (src/emulator, src/bench): only `emulate`, `demo` and `bench` load them,
// and there they fail with a message that says so (test/deploy/production-image.test.ts).
import { ConfigError } from '../config/load-config.js'

const HELP = `switchyard <command> [options]

Commands:
  serve                         run the worker (npm start)
  validate [FILES...]           check pipeline files (a folder: its *.yaml, *.yml); every error as
                                file:line:col; exit 1 on any
  try PIPELINE STRINGS.json     dry run of one pipeline on local strings (--pretty for a table)
  manifest                      print the app manifest rendered from the pipelines
  config [--check]              print the configuration reference (environment variables);
                                --check validates the environment and the directories it
                                names (PIPELINES_DIR, PLUGINS_DIR, DATA_DIR, a sqlite://
                                STORE_URL's)
  emulate [--port N]            run the emulated localization service alone
  demo                          the emulated service + the worker + a sample project, routed
  bench [--quick]               measure throughput, API calls, model calls and memory

Configuration comes from the environment: see \`switchyard config\` and the README.`

type Command = (args: string[]) => Promise<number>

const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).runServe,
  validate: async () => (await import('./validate.js')).runValidate,
  try: async () => (await import('./try.js')).runTry,
  manifest: async () => (await import('./manifest.js')).runManifest,
  config: async () => (await import('./config.js')).runConfig,
  emulate: async () => (await import('../emulator/run-emulate.js')).runEmulate,
  demo: async () => (await import('./demo.js')).runDemo,
  bench: async () => (await import('./bench.js')).runBench,
}

/** Commands that need src/emulator or src/bench: development checkouts only. */
const DEVELOPMENT_ONLY = new Set(['emulate', 'demo', 'bench'])

/** Commands that are servers: their stdout is a log, and a closed log is not a reader done reading. */
const SERVERS = new Set(['serve', 'emulate'])

/**
 * A reader that stops early (`switchyard try ... | head`) closes the pipe. Node ignores SIGPIPE
 * and raises EPIPE on the next write, which would end the command with a stack trace; it stops
 * quietly instead, with the status a Unix tool ended by SIGPIPE has (128 + 13).
 */
export const CLOSED_PIPE_STATUS = 141
function stopQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(CLOSED_PIPE_STATUS)
    throw error
  })
}

/** Is `error` the import of a module under src/emulator or src/bench failing because it is not there? */
export function isLeftOutOfImage(error: unknown): boolean {
  const e = error as { code?: unknown; url?: unknown; message?: unknown }
  if (e === null || typeof e !== 'object' || e.code !== 'ERR_MODULE_NOT_FOUND') return false
  // The missing module itself, not the module importing it (a missing package imported *from*
  // the emulator is a broken install, not a production image).
  const missing = typeof e.url === 'string' ? e.url : /Cannot find module '([^']+)'/.exec(String(e.message))?.[1]
  return missing !== undefined && /[\\/]src[\\/](emulator|bench)[\\/]/.test(missing)
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(HELP)
    return name ? 0 : 1
  }
  const load = commands[name]
  if (!load) {
    console.error(`switchyard: unknown command "${name}"\n\n${HELP}`)
    return 2
  }
  if (!SERVERS.has(name)) stopQuietlyWhenStdoutCloses()
  try {
    return await (await load())(args)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message)
      return 2
    }
    if (DEVELOPMENT_ONLY.has(name) && isLeftOutOfImage(error)) {
      console.error(
        `switchyard ${name}: this command is for development checkouts. This installation (like the production image) ` +
          `leaves out the emulator and the bench it needs; run it from a clone of the repository (npm ci, then npx switchyard ${name}).`,
      )
      return 1
    }
    throw error
  }
}
