// What a scan found in a text, kept for the next check that asks about the same text. A pipeline
// runs its checks one after the other over the same strings, and several checks scan each text
// for the same things (placeholders, URLs, tags): on a string of 48,000 characters each scan
// costs milliseconds, and punctuation, numbers, brackets and tags asked for it again (bench,
// issue 17). The answers are frozen (a caller that changed one would change it for the next), and
// only the last `max` texts of at least `minLength` characters are kept, so memory stays bounded.

export interface RecentScansOptions {
  /** Texts kept at most; the oldest goes first. */
  max: number
  /** Shorter texts are scanned every time (cheaper than keeping them). */
  minLength?: number
}

/** `scan`, answering again for a text it saw recently. */
export function keepRecentScans<T extends object>(scan: (text: string) => T[], options: RecentScansOptions): (text: string) => ReadonlyArray<Readonly<T>> {
  const recent = new Map<string, ReadonlyArray<Readonly<T>>>()
  const minLength = options.minLength ?? 0
  return (text) => {
    if (text.length < minLength) return scan(text)
    let found = recent.get(text)
    if (!found) {
      found = Object.freeze(scan(text).map((x) => Object.freeze(x)))
      if (recent.size >= options.max) recent.delete(recent.keys().next().value!)
      recent.set(text, found)
    }
    return found
  }
}
