// Protocol mistakes the emulator saw an app make: things the real platform would not refuse
// loudly (or would refuse in a way an app may shrug off) but that mean the app is wrong, such as
// a status update for a string that is not waiting, a second output for one arrival, or a request
// without a valid token. Tests assert there were none: `expect(emu.mistakes()).toEqual([])`.

export type MistakeKind =
  /** PATCH for a (string, language) that is not NEED_PROCESS and got no output this arrival (FAILED, never arrived, ...). */
  | 'patch-not-waiting'
  /** PATCH giving a second output to one arrival of a string (it was already DONE or parked). */
  | 'second-output'
  /** API request without a bearer token. */
  | 'no-token'
  /** API request with a token the service never issued (or malformed). */
  | 'invalid-token'
  /** One organization's token used on another organization's domain. */
  | 'token-of-another-organization'
  /** Token endpoint called with a body that is not JSON (section 4.2: JSON bodies). */
  | 'token-form-body'
  /** Refresh without client_secret (section 4.3 requires it). */
  | 'refresh-without-secret'
  /** Refresh with a refresh token that was already rotated away (use only the newest one). */
  | 'refresh-token-reused'

export interface Mistake {
  kind: MistakeKind
  /** Organization id the request was addressed to (by domain), or '' when unknown. */
  organizationId: string
  /** Method and path of the request, e.g. `PATCH /api/v2/projects/42/...`. */
  path: string
  detail: string
  at: string
}

/** Keeps the first `limit` mistakes in full and counts the rest (a broken app can make millions). */
export class MistakeLog {
  private readonly list: Mistake[] = []
  private dropped = 0

  constructor(private readonly limit = 1000) {}

  record(kind: MistakeKind, organizationId: string, path: string, detail: string): void {
    if (this.list.length >= this.limit) {
      this.dropped++
      return
    }
    this.list.push({ kind, organizationId, path, detail, at: new Date().toISOString() })
  }

  all(filter: { kind?: MistakeKind; organizationId?: string } = {}): Mistake[] {
    return this.list.filter((m) => (filter.kind === undefined || m.kind === filter.kind) && (filter.organizationId === undefined || m.organizationId === filter.organizationId))
  }

  /** Mistakes seen, including those beyond the kept list. */
  count(): number {
    return this.list.length + this.dropped
  }

  clear(): void {
    this.list.length = 0
    this.dropped = 0
  }
}

/** Throws an Error listing the mistakes (the first 20) when there are any. */
export function assertNoMistakes(log: MistakeLog): void {
  const n = log.count()
  if (n === 0) return
  const lines = log.all().slice(0, 20).map((m) => `  ${m.kind} org=${m.organizationId} ${m.path}: ${m.detail}`)
  throw new Error(`emulator: the app made ${n} protocol mistake(s):\n${lines.join('\n')}`)
}
