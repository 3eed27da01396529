// What BASE_URL says about where the worker is reached. A URL's scheme and host are
// case-insensitive (HTTPS://Example.com is https), so they are read from the parsed URL, never
// from the text (`startsWith('https:')` misses HTTPS://).

/** The URL, or undefined when it is not one. */
export function parsedUrl(url: string): URL | undefined {
  try {
    return new URL(url)
  } catch {
    return undefined
  }
}

/** The address is https. */
export function isHttpsUrl(url: string): boolean {
  return parsedUrl(url)?.protocol === 'https:'
}

/** The address is the default's kind: plain http on localhost, reached by nobody else. */
export function isLocalhostHttpUrl(url: string): boolean {
  const u = parsedUrl(url)
  return u?.protocol === 'http:' && u.hostname === 'localhost'
}
