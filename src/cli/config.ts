// `switchyard config`: the configuration reference, and with --check, whether the current
// environment is valid and what is missing for a real organization.
import { checkConfig, missingForProduction } from '../config/load-config.js'
import { optionsTable } from '../config/options-table.js'

const USAGE = `usage: switchyard config [--check]
Prints the configuration reference (every environment variable, its type, default and meaning).
--check: validates the current environment instead (and that PIPELINES_DIR holds pipelines, PLUGINS_DIR
is there, and DATA_DIR and the directory of a sqlite:// STORE_URL can be written), and says what is
missing for a real organization.
`

export async function runConfig(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) { process.stdout.write(USAGE); return 0 }
  const unknown = args.find((a) => a !== '--check')
  if (unknown !== undefined) { process.stderr.write(`unknown option ${unknown}\n${USAGE}`); return 2 }
  if (args.includes('--check')) {
    const config = checkConfig(process.env)
    const missing = missingForProduction(config)
    if (missing.length === 0) console.log('configuration is complete')
    else console.log(`configuration is valid; missing for a real organization:\n  ${missing.join('\n  ')}`)
    return 0
  }
  console.log(optionsTable())
  return 0
}
