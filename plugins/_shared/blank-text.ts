// "Blank" as a translator's editor sees it: nothing visible. JavaScript's \s covers the Unicode
// spaces and NBSP but not the zero-width and invisible format characters that editors and machine
// translation leave behind, nor the soft hyphen.
const BLANK = /^[\s\u00AD\u034F\u061C\u115F\u1160\u180E\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u206F\u3164\uFEFF\uFFA0]*$/u

/** Does the text contain nothing visible (empty, spaces, NBSP, zero-width or directional marks)? */
export function isBlank(text: string): boolean {
  return BLANK.test(text)
}
