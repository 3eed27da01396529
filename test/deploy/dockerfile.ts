// A small Dockerfile reader for the tests of test/deploy: there is no Docker engine where the tests
// run, so the Dockerfile is read as text (stages, instructions, COPY sources) and its effects are
// checked or simulated from that.
export interface Instruction {
  op: string
  args: string
}
export interface Stage {
  image: string
  name: string | undefined
  body: Instruction[]
}

/** Instructions of a Dockerfile, continuation lines joined, comments and directives dropped. */
export function instructions(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ')
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const m = /^(\w+)\s+(.*)$/.exec(l)
      if (!m) throw new Error(`unreadable Dockerfile line: ${l}`)
      return { op: m[1]!.toUpperCase(), args: m[2]! }
    })
}

export function stages(text: string): Stage[] {
  const out: Stage[] = []
  for (const ins of instructions(text)) {
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)
      out.push({ image: m![1]!, name: m![2], body: [] })
    } else {
      out.at(-1)!.body.push(ins)
    }
  }
  return out
}

/** COPY [--from=x] [--chown=..] SRC... DEST, shell or JSON form. */
export function copyOf(ins: Instruction): { from: string | undefined; sources: string[]; dest: string } {
  const words = ins.args.startsWith('[') ? (JSON.parse(ins.args) as string[]) : ins.args.split(/\s+/)
  let from: string | undefined
  const rest: string[] = []
  for (const w of words) {
    if (w.startsWith('--from=')) from = w.slice('--from='.length)
    else if (!w.startsWith('--')) rest.push(w)
  }
  return { from, sources: rest.slice(0, -1), dest: rest.at(-1)! }
}

/** Very small .dockerignore matcher: exact paths, leading-directory matches and `*` globs. */
export function ignored(patterns: string[], file: string): boolean {
  return patterns.some((p) => {
    const re = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`)
    return re.test(file)
  })
}

/** The paths `rm -rf` removes in a stage's RUN instructions (only plain `rm -rf` / `rm -fr` words). */
export function removedPaths(stage: Stage): string[] {
  const out: string[] = []
  for (const ins of stage.body.filter((i) => i.op === 'RUN')) {
    for (const m of ins.args.matchAll(/\brm\s+-(?:rf|fr)\s+([^&;|]+)/g)) out.push(...m[1]!.trim().split(/\s+/))
  }
  return out
}
