// Where the environment's key may go. OPENAI_API_KEY is the operator's, for the operator's server
// (OPENAI_BASE_URL, else OpenAI); a pipeline's `baseUrl` is written by whoever writes pipelines
// (or, through `${settings.x}`, by a workflow-editor user), so a server it names elsewhere gets
// the pipeline's own `apiKey` or no key at all.

/** OpenAI's API, the server of OPENAI_API_KEY when OPENAI_BASE_URL is not set. */
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1'

const parse = (url: string): URL | undefined => {
  try {
    return new URL(url)
  } catch {
    return undefined
  }
}

/**
 * Whether requests to `url` stay on the server at `home`: the same origin (scheme, host and port,
 * as the URL standard normalizes them: case, default ports, dot segments) and a path inside
 * home's, at a segment boundary (`/v1` holds `/v1/` and `/v1/x`, not `/v1x` nor `/`). A slash or
 * backslash percent-encoded past home's path is refused: a proxy that decodes it could route the
 * request out of that path. The query and fragment do not change where a request goes.
 */
export function withinServer(url: string, home: string): boolean {
  if (url === home) return true
  const target = parse(url)
  const base = parse(home)
  if (!target || !base || target.origin === 'null' || target.origin !== base.origin) return false
  const prefix = base.pathname.replace(/\/+$/, '')
  const path = target.pathname
  if (path !== prefix && !path.startsWith(prefix + '/')) return false
  return !/%(2f|5c)/i.test(path.slice(prefix.length))
}

/** The URL as it can be quoted in an error: without a user name or password in it. */
export function quotable(url: string): string {
  const parsed = parse(url)
  if (!parsed || (!parsed.username && !parsed.password)) return url
  parsed.username = ''
  parsed.password = ''
  return parsed.href
}

/**
 * Whether `baseUrl` (the option) names a server other than the environment's (OPENAI_BASE_URL,
 * else OpenAI's): OPENAI_API_KEY must not go there. Throws when it is no URL at all.
 */
export function isForeignServer(baseUrl: string | undefined, envBaseUrl: string | undefined): boolean {
  if (!baseUrl || withinServer(baseUrl, envBaseUrl || DEFAULT_BASE_URL)) return false
  if (!parse(baseUrl)) throw new Error(`ai-proofread: baseUrl ${quotable(baseUrl)} is not a URL; give the base URL of an OpenAI-compatible API, such as http://localhost:8000/v1`)
  return true
}

/**
 * Whether `baseUrl` is OpenAI's own API, which answers nothing without a key: a request there
 * without one is not sent. Any other server may take requests without a key (a self-hosted one).
 */
export const isOpenAi = (baseUrl: string): boolean => withinServer(baseUrl, DEFAULT_BASE_URL)
