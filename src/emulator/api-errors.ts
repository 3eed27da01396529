// Error bodies of the emulated API, shaped like the real platform's: `{ error: { code, message } }`
// for most statuses and `{ errors: [ { error: { key, errors: [ { code, message } ] } } ] }` for 400.
import type { Context } from 'koa'

export function apiError(ctx: Context, status: number, message: string): void {
  ctx.status = status
  ctx.body = { error: { code: status, message } }
}

export function validationError(ctx: Context, key: string, message: string, code = 'invalid'): void {
  ctx.status = 400
  ctx.body = { errors: [{ error: { key, errors: [{ code, message }] } }] }
}
