// The settings page shown in the workflow editor's iframe, generated from the pipeline's settings
// schema. Everything that comes from a pipeline author or a user is escaped: HTML text and
// attributes with escapeHtml, the JSON handed to the script with safeJsonForScript, so a stored
// value like `</script><script>...` stays text. The page loads nothing but the service's iframe
// script (SETTINGS_SCRIPT_URL: the platform's by default, none when set empty) and its own
// nonce'd inline script and style.
import { formFields, type FormField } from './settings-form-fields.js'
import { SETTINGS_PAGE_SCRIPT } from './settings-page-script.js'

export interface SettingsPageInput {
  title: string
  settingsSchema: object
  /** Stored settings of the step, if any; fields fall back to the schema defaults. */
  stored?: Record<string, unknown>
  nonce: string
  /** The service's iframe script (defines AP); omitted when empty. */
  scriptUrl?: string
  /** A line saying which step the page edits. */
  note?: string
  /**
   * Set when the page cannot tell which step it edits: it shows this instead of a form, since
   * defaults shown there and saved would overwrite the step's real settings.
   */
  missingContext?: string
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c)
}

/** JSON that can sit inside a <script> element: no `</script>`, no `<!--`, no JS line breaks. */
export function safeJsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

function attr(name: string, value: unknown): string {
  return value === undefined || value === null || value === false ? '' : ` ${name}="${escapeHtml(value)}"`
}

function control(field: FormField, value: unknown): string {
  const id = `f-${field.name}`
  const common = `${attr('id', id)}${attr('name', field.name)}${attr('data-name', field.name)}${attr('aria-describedby', `e-${field.name}`)}`
  switch (field.kind) {
    case 'text':
      return `<input type="text"${common}${attr('value', typeof value === 'string' ? value : '')}${attr('maxlength', field.maxLength)}${attr('required', field.required ? 'required' : undefined)}>`
    case 'textarea':
      return `<textarea rows="5"${common}${attr('maxlength', field.maxLength)}>${escapeHtml(typeof value === 'string' ? value : '')}</textarea>`
    case 'number':
    case 'integer':
      return `<input type="number"${common}${attr('step', field.kind === 'integer' ? '1' : 'any')}${attr('min', field.minimum ?? field.exclusiveMinimum)}${attr('max', field.maximum ?? field.exclusiveMaximum)}${attr('value', typeof value === 'number' ? value : undefined)}>`
    case 'checkbox':
      return `<input type="checkbox"${common}${attr('checked', value === true ? 'checked' : undefined)}>`
    case 'select': {
      const options = (field.enum ?? []).map((option, i) => `<option${attr('value', i)}${attr('selected', same(option, value) ? 'selected' : undefined)}>${escapeHtml(typeof option === 'string' ? option : JSON.stringify(option))}</option>`)
      const chosen = (field.enum ?? []).some((o) => same(o, value))
      const empty = field.required && chosen ? '' : `<option value=""${chosen ? '' : ' selected'}>(not set)</option>`
      return `<select${common}>${empty}${options.join('')}</select>`
    }
    case 'lines': {
      const lines = Array.isArray(value) ? value.map((v) => String(v)).join('\n') : ''
      return `<textarea rows="5" class="lines"${common}>${escapeHtml(lines)}</textarea>`
    }
    case 'json':
      return `<textarea rows="6" class="code"${common}>${escapeHtml(value === undefined ? '' : JSON.stringify(value, null, 2))}</textarea>`
    default: {
      const never: never = field.kind
      throw new Error(`unknown field kind ${String(never)}`)
    }
  }
}

function renderField(field: FormField, stored: Record<string, unknown> | undefined): string {
  const value = stored && Object.hasOwn(stored, field.name) ? stored[field.name] : field.default
  const hint = field.kind === 'lines' ? 'One per line.' : field.kind === 'json' ? 'JSON.' : ''
  const description = [field.description, hint].filter(Boolean).map((d) => escapeHtml(d)).join(' ')
  const label = `${escapeHtml(field.title)}${field.required ? ' <span class="req" aria-hidden="true">*</span>' : ''}`
  if (field.kind === 'checkbox') {
    return `<div class="field check">${control(field, value)}<label${attr('for', `f-${field.name}`)}>${label}</label>${description ? `<p class="hint">${description}</p>` : ''}<p class="error"${attr('id', `e-${field.name}`)} role="alert" hidden></p></div>`
  }
  return `<div class="field"><label${attr('for', `f-${field.name}`)}>${label}</label>${description ? `<p class="hint">${description}</p>` : ''}${control(field, value)}<p class="error"${attr('id', `e-${field.name}`)} role="alert" hidden></p></div>`
}

const STYLE = `
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --accent: #0969da; --bad: #d1242f; }
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 20px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: #fff; }
h1 { font-size: 16px; font-weight: 600; margin: 0 0 4px; }
.note { color: var(--muted); margin: 0 0 16px; }
.field { margin: 0 0 16px; max-width: 640px; }
.field > label { display: block; font-weight: 600; margin-bottom: 4px; }
.field.check { display: grid; grid-template-columns: auto 1fr; column-gap: 8px; align-items: start; }
.field.check > label { font-weight: 600; margin: 0; }
.field.check > .hint, .field.check > .error { grid-column: 2; }
.hint { color: var(--muted); margin: 0 0 6px; font-size: 13px; }
input[type=text], input[type=number], select, textarea { width: 100%; padding: 6px 8px; font: inherit; color: inherit; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
textarea.code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
input:focus, select:focus, textarea:focus { outline: 2px solid var(--accent); outline-offset: -1px; border-color: var(--accent); }
[aria-invalid=true] { border-color: var(--bad); }
.error { color: var(--bad); margin: 4px 0 0; font-size: 13px; }
.req { color: var(--bad); }
.empty { color: var(--muted); }
.missing { max-width: 640px; padding: 8px 12px; border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px; }
`

export function renderSettingsPage(input: SettingsPageInput): string {
  const schemaFields = formFields(input.settingsSchema)
  const nonce = escapeHtml(input.nonce)
  // A step without settings has nothing a save could overwrite: it needs no context.
  const missing = schemaFields.length > 0 ? input.missingContext : undefined
  const fields = missing ? [] : schemaFields
  // The step's note ("no saved settings yet; showing the defaults") says nothing of a step without
  // settings, beside "This step has no settings." (docs/settings.md).
  const body = missing
    ? `<p class="missing" role="status">${escapeHtml(missing)}</p>`
    : `<form id="settings-form" novalidate autocomplete="off">
${fields.length ? fields.map((f) => renderField(f, input.stored)).join('\n') : '<p class="empty">This step has no settings.</p>'}
</form>`
  // The script publishes `stored` (as saved, {} when nothing is) once the page has loaded.
  const data = missing ? { fields, context: false } : { fields, context: true, stored: input.stored ?? {} }
  const apScript = input.scriptUrl ? `<script${attr('src', input.scriptUrl)}></script>\n` : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(input.title)} settings</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(input.title)}</h1>
${input.note && !missing && fields.length ? `<p class="note">${escapeHtml(input.note)}</p>` : ''}
${body}
<script type="application/json" id="switchyard-settings-data">${safeJsonForScript(data)}</script>
${apScript}<script nonce="${nonce}">${SETTINGS_PAGE_SCRIPT}</script>
</body>
</html>
`
}
