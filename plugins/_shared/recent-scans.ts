// What a scan found in a text, kept for the next check that asks about the same text. A pipeline
// runs its checks one after the other over the same strings, and several checks scan each text
// for the same things (placeholders, URLs, tags): on a string of 48,000 characters each scan
// costs milliseconds, and punctuation, numbers, brackets and tags asked for it again (bench,
// issue 17). The answers are frozen (a caller that changed one would change it for the next), and
// only the last `max` texts of at least `minLength` characters, `maxChars` characters in all, are
// kept, so memory stays bounded.

export interface RecentScansOptions {
  /** Texts kept at most; the oldest goes first. */
  max: number
  /** Shorter texts are scanned every time (cheaper than keeping them). */
  minLength?: number
  /** Characters of the texts kept, at most (their answers grow with them); default 1,000,000. */
  maxChars?: number
}

/** An answer's items and their own lists and records (a tag's attributes), frozen. */
function frozen<T extends object>(item: T): Readonly<T> {
  for (const value of Object.values(item)) if (value && typeof value === 'object') Object.freeze(value)
  return Object.freeze(item)
}

/** `scan`, answering again for a text it saw recently. */
export function keepRecentScans<T extends object>(scan: (text: string) => T[], options: RecentScansOptions): (text: string) => ReadonlyArray<Readonly<T>> {
  const recent = new Map<string, ReadonlyArray<Readonly<T>>>()
  const minLength = options.minLength ?? 0
  const maxChars = options.maxChars ?? 1_000_000
  let chars = 0
  return (text) => {
    if (text.length < minLength) return scan(text)
    let found = recent.get(text)
    if (!found) {
      found = Object.freeze(scan(text).map(frozen))
      if (text.length > maxChars) return found
      while (recent.size && (recent.size >= options.max || chars + text.length > maxChars)) {
        const oldest = recent.keys().next().value!
        recent.delete(oldest)
        chars -= oldest.length
      }
      recent.set(text, found)
      chars += text.length
    }
    return found
  }
}
