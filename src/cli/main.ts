// The `switchyard` command. Each subcommand lives in its own module, loaded only when used, so
// `switchyard validate` doesn't pay for the server.
import { ConfigError } from '../config/load-config.js'

const HELP = `switchyard <command> [options]

Commands:
  serve                         run the worker (npm start)
  validate [FILES...]           check pipeline files; every error as file:line:col; exit 1 on any
  try PIPELINE STRINGS.json     dry run of one pipeline on local strings (--pretty for a table)
  manifest                      print the app manifest rendered from the pipelines
  config                        print the configuration reference (environment variables)
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
  try {
    return await (await load())(args)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message)
      return 2
    }
    throw error
  }
}
