// Holds the current pipeline set and swaps it on reload. A reload that fails validation keeps the
// old set and returns every error; a successful one closes the old set's plugins only once the
// runs it started have finished (or after a grace period), so in-flight work ends as it began.
import { loadPipelines, type EngineDeps, type LocatedError } from './load-pipelines.js'
import type { PipelineSet } from './pipeline.js'

export { pipelineSourceOf } from '../config/pipeline-source.js'

export class PipelineHost {
  private set: PipelineSet | undefined
  private loading: Promise<{ ok: boolean; errors: LocatedError[] }> | undefined
  private loads = 0

  constructor(private readonly source: string[] | { dir: string }, private readonly deps: EngineDeps) {}

  /** The first load; the same as reload(). */
  load(): Promise<{ ok: boolean; errors: LocatedError[] }> {
    return this.reload()
  }

  /** What a failed load means: at the start there are no previous pipelines to keep (the worker does not start). */
  private notLoaded(): string {
    return this.set ? 'pipelines not reloaded; the previous ones stay in use' : 'pipelines not loaded'
  }

  reload(): Promise<{ ok: boolean; errors: LocatedError[] }> {
    // Reloads asked for while one runs wait for it, then load again (files may have changed since).
    const run = async (): Promise<{ ok: boolean; errors: LocatedError[] }> => {
      let result: Awaited<ReturnType<typeof loadPipelines>>
      try {
        result = await loadPipelines(this.source, this.deps)
      } catch (e) {
        // Whatever a plugin or file does that the checks did not foresee: a failed load like any
        // other, never a rejection that would take the worker down on a SIGHUP.
        const message = `loading failed: ${e instanceof Error ? e.message : String(e)}`
        this.deps.log.error({ err: e }, this.notLoaded())
        const where = Array.isArray(this.source) ? this.source.join(',') : this.source.dir
        return { ok: false, errors: [{ file: where, line: 0, col: 0, message }] }
      }
      if (!result.ok) {
        this.deps.log.error({ errors: result.errors.length }, this.notLoaded())
        return { ok: false, errors: result.errors }
      }
      for (const w of result.warnings) this.deps.log.warn(`${w.file}:${w.line}:${w.col} ${w.message}`)
      const old = this.set
      this.set = result.set
      this.loads++
      if (old) void old.close().catch((e: unknown) => this.deps.log.warn({ err: (e as Error).message }, 'closing old pipelines failed'))
      this.deps.log.info({ pipelines: result.set.all().map((p) => p.key) }, 'pipelines loaded')
      return { ok: true, errors: [] }
    }
    const next = (this.loading ?? Promise.resolve()).then(run, run)
    this.loading = next
    return next
  }

  /** Counts successful loads: the pipeline pool's threads load again when it moves on. */
  get generation(): number {
    return this.loads
  }

  /** How the pipelines are loaded (for the pipeline pool's threads, which load the same). */
  get origin(): { source: string[] | { dir: string }; pluginsDir?: string } {
    return { source: this.source, pluginsDir: this.deps.pluginsDir }
  }

  /** The pipelines in use; throws before the first successful load. */
  get current(): PipelineSet {
    if (!this.set) throw new Error('no pipelines loaded yet: call load() and fix the errors it returns')
    return this.set
  }

  /** Close the current set (on shutdown). */
  async close(): Promise<void> {
    await this.set?.close()
  }
}
