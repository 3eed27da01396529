// `switchyard config`: the configuration reference, and with --check, whether the current
// environment is valid and what is missing for a real organization.
import { loadConfig, missingForProduction } from '../config/load-config.js'
import { optionsTable } from '../config/options-table.js'

export async function runConfig(args: string[]): Promise<number> {
  if (args.includes('--check')) {
    const config = loadConfig(process.env)
    const missing = missingForProduction(config)
    if (missing.length === 0) console.log('configuration is complete')
    else console.log(`configuration is valid; missing for a real organization:\n  ${missing.join('\n  ')}`)
    return 0
  }
  console.log(optionsTable())
  return 0
}
