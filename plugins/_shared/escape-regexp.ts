/** Escape text for use inside a regular expression, valid with the `u` flag (no `\-`, `\/`). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
