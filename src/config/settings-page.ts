// What SETTINGS_SCRIPT_URL and SETTINGS_FRAME_ANCESTORS may hold. Read by loadConfig, so that
// `switchyard config --check` refuses what the worker would refuse, and by the settings page's
// Content-Security-Policy (src/settings/settings-routes.ts), which is built from them.

/**
 * The script-src source of SETTINGS_SCRIPT_URL: none for an empty value or a path of the worker's
 * own origin (`/...`, covered by 'self'), else the URL's origin; an error when it is neither.
 */
export function settingsScriptSource(url: string): { ok: true; source: string | undefined } | { ok: false; error: string } {
  if (!url || url.startsWith('/')) return { ok: true, source: undefined }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, error: `SETTINGS_SCRIPT_URL: "${url}" is not a URL (expected e.g. https://cdn.example.com/iframe.js)` }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, error: `SETTINGS_SCRIPT_URL: "${url}" must be an http(s) URL (expected e.g. https://cdn.example.com/iframe.js)` }
  }
  return { ok: true, source: parsed.origin }
}

/** SETTINGS_FRAME_ANCESTORS as it goes into the CSP (empty: `*`), or an error. */
export function settingsFrameAncestors(value: string | undefined): { ok: true; ancestors: string } | { ok: false; error: string } {
  const ancestors = (value ?? '*').trim() || '*'
  // A `;` would end the directive and start another (`*; script-src 'unsafe-inline'`).
  if (/[;,"\r\n]/.test(ancestors)) return { ok: false, error: `SETTINGS_FRAME_ANCESTORS: "${ancestors}" must be CSP sources separated by spaces (no ; or ,)` }
  return { ok: true, ancestors }
}
