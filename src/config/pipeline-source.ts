// What PIPELINES_DIR names: read by the engine (which loads the files) and by `config --check`
// (which checks they are there), so both read it alike.

/**
 * PIPELINES_DIR as a source: a directory, or a comma-separated list of pipeline files. A single
 * pipeline file (`pipelines/qa-gate.yaml`) is a list of one, not a directory to list.
 */
export function pipelineSourceOf(setting: string): string[] | { dir: string } {
  const entries = setting.split(',').map((f) => f.trim()).filter(Boolean)
  return setting.includes(',') || isPipelineFileName(setting.trim()) ? entries : { dir: setting }
}

/** Is this the name of a pipeline file (*.yaml, *.yml)? The files of a directory the engine loads. */
export function isPipelineFileName(name: string): boolean {
  return /\.ya?ml$/i.test(name)
}
