// How a step's logo is served. A logo is a file the pipeline author chose; an SVG can carry
// script, and a browser that sniffs can take any file for HTML. Served on the worker's own
// origin (where the operator page lives), it must never run: only image types from a short list,
// `nosniff`, and a CSP with no script at all.

export const LOGO_CONTENT_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/svg+xml', 'image/jpeg', 'image/webp', 'image/gif'])

/** Forbids script, frames, plugins and fetches; an SVG may keep its inline styles. */
export const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

export function isServableLogoType(contentType: string): boolean {
  return LOGO_CONTENT_TYPES.has(contentType.split(';')[0]!.trim().toLowerCase())
}

export const LOGO_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': LOGO_CSP,
  'Cache-Control': 'public, max-age=3600',
}
