// String comments and issues (platform notes, "String comments"): what a translator sees beside a
// string in the editor. An app raises an issue with POST, lists with GET, resolves with PATCH;
// there is no bulk call, and every request counts against the organization's 20 in flight.
import { Router } from '@koa/router'
import type { Context, Middleware } from 'koa'
import getRawBody from 'raw-body'
import { apiError, validationError } from './api-errors.js'
import type { Tenant } from './tenant.js'

export const COMMENT_TYPES = ['comment', 'issue'] as const
export const ISSUE_TYPES = ['general_question', 'translation_mistake', 'context_request', 'source_mistake'] as const

export interface StringComment {
  id: number
  text: string
  userId: number
  stringId: number
  languageId: string
  type: (typeof COMMENT_TYPES)[number]
  issueType: (typeof ISSUE_TYPES)[number] | null
  issueStatus: 'resolved' | 'unresolved' | null
  createdAt: string
}

export interface CommentFilter {
  stringId?: number
  languageId?: string
  type?: string
  issueStatus?: string
}

export class CommentStore {
  private readonly byId = new Map<number, StringComment>()
  private nextId = 9_000_001

  add(input: Omit<StringComment, 'id' | 'createdAt' | 'userId' | 'issueStatus'>): StringComment {
    const comment: StringComment = {
      ...input,
      id: this.nextId++,
      userId: 9003,
      issueStatus: input.type === 'issue' ? 'unresolved' : null,
      createdAt: new Date().toISOString(),
    }
    this.byId.set(comment.id, comment)
    return comment
  }

  get(id: number): StringComment | undefined {
    return this.byId.get(id)
  }

  list(filter: CommentFilter = {}): StringComment[] {
    const out: StringComment[] = []
    for (const c of this.byId.values()) {
      if (filter.stringId !== undefined && c.stringId !== filter.stringId) continue
      if (filter.languageId !== undefined && c.languageId !== filter.languageId) continue
      if (filter.type !== undefined && c.type !== filter.type) continue
      if (filter.issueStatus !== undefined && c.issueStatus !== filter.issueStatus) continue
      out.push(c)
    }
    return out
  }

  clear(): void {
    this.byId.clear()
  }
}

async function readJson(ctx: Context): Promise<unknown> {
  if (!/json/.test(ctx.request.type)) throw Object.assign(new Error('Content-Type must be application/json'), { status: 415 })
  try {
    return JSON.parse(await getRawBody(ctx.req, { limit: '1mb', encoding: 'utf8' }))
  } catch {
    return Symbol.for('bad-json')
  }
}

function one(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name]
  return typeof v === 'string' && v !== '' ? v : undefined
}

/** The comment routes behind `guard`; `tenant(ctx)` is the organization the request addressed. */
export function commentRoutes(tenant: (ctx: Context) => Tenant, guard: Middleware): Router {
  const router = new Router()
  const base = '/api/v2/projects/:projectId/comments'

  const common = (ctx: Context): Tenant | undefined => {
    const t = tenant(ctx)
    if (t.refuseComments !== null) {
      apiError(ctx, t.refuseComments, t.refuseComments === 403 ? 'Forbidden: the app may not comment in this project' : 'Comments are unavailable (injected)')
      return undefined
    }
    if (!/^\d+$/.test(ctx.params.projectId ?? '') || Number(ctx.params.projectId) !== t.sample.project.id) {
      apiError(ctx, 404, 'Project Not Found')
      return undefined
    }
    return t
  }

  router.post(base, guard, async (ctx) => {
    const t = common(ctx)
    if (!t) return
    let body: unknown
    try {
      body = await readJson(ctx)
    } catch (error) {
      return apiError(ctx, 415, (error as Error).message)
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return validationError(ctx, 'body', 'The body must be a JSON object')
    const b = body as Record<string, unknown>
    if (!Number.isInteger(b.stringId) || !t.sample.byId.has(b.stringId as number)) return validationError(ctx, 'stringId', 'stringId must be the id of a string of the project', 'notFound')
    if (typeof b.targetLanguageId !== 'string' || !t.sample.languages.includes(b.targetLanguageId)) return validationError(ctx, 'targetLanguageId', 'targetLanguageId must be a target language of the project')
    if (typeof b.text !== 'string' || b.text.trim() === '') return validationError(ctx, 'text', 'text is required')
    if (!(COMMENT_TYPES as readonly unknown[]).includes(b.type)) return validationError(ctx, 'type', `type must be one of ${COMMENT_TYPES.join(', ')}`)
    let issueType: StringComment['issueType'] = null
    if (b.type === 'issue') {
      if (!(ISSUE_TYPES as readonly unknown[]).includes(b.issueType)) return validationError(ctx, 'issueType', `issueType must be one of ${ISSUE_TYPES.join(', ')}`)
      issueType = b.issueType as StringComment['issueType']
    }
    const comment = t.comments.add({ text: b.text, stringId: b.stringId as number, languageId: b.targetLanguageId, type: b.type as StringComment['type'], issueType })
    ctx.status = 201
    ctx.body = { data: comment }
  })

  router.get(base, guard, (ctx) => {
    const t = common(ctx)
    if (!t) return
    const limit = Number(one(ctx, 'limit') ?? 25)
    const offset = Number(one(ctx, 'offset') ?? 0)
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) return validationError(ctx, 'limit', 'limit must be between 1 and 500')
    if (!Number.isInteger(offset) || offset < 0) return validationError(ctx, 'offset', 'offset must be a non-negative integer')
    const stringId = one(ctx, 'stringId')
    const filter: CommentFilter = {
      ...(stringId !== undefined ? { stringId: Number(stringId) } : {}),
      ...(one(ctx, 'targetLanguageId') ? { languageId: one(ctx, 'targetLanguageId')! } : {}),
      ...(one(ctx, 'type') ? { type: one(ctx, 'type')! } : {}),
      ...(one(ctx, 'issueStatus') ? { issueStatus: one(ctx, 'issueStatus')! } : {}),
    }
    const all = t.comments.list(filter)
    ctx.body = { data: all.slice(offset, offset + limit).map((c) => ({ data: c })), pagination: { offset, limit } }
  })

  router.patch(`${base}/:commentId`, guard, async (ctx) => {
    const t = common(ctx)
    if (!t) return
    const comment = t.comments.get(Number(ctx.params.commentId))
    if (!comment) return apiError(ctx, 404, 'Comment Not Found')
    let body: unknown
    try {
      body = await readJson(ctx)
    } catch (error) {
      return apiError(ctx, 415, (error as Error).message)
    }
    if (!Array.isArray(body) || body.length === 0) return validationError(ctx, 'body', 'The body must be a non-empty JSON array of patch operations')
    const changes: Array<() => void> = []
    for (let i = 0; i < body.length; i++) {
      const op = body[i] as Record<string, unknown> | null
      if (!op || op.op !== 'replace') return validationError(ctx, `${i}.op`, `Operation ${i}: op must be "replace"`)
      if (op.path === '/issueStatus') {
        if (comment.type !== 'issue' || (op.value !== 'resolved' && op.value !== 'unresolved')) return validationError(ctx, `${i}.value`, `Operation ${i}: issueStatus must be resolved or unresolved, on an issue`)
        changes.push(() => (comment.issueStatus = op.value as 'resolved' | 'unresolved'))
      } else if (op.path === '/text') {
        if (typeof op.value !== 'string' || op.value.trim() === '') return validationError(ctx, `${i}.value`, `Operation ${i}: text must be a non-empty string`)
        changes.push(() => (comment.text = op.value as string))
      } else {
        return validationError(ctx, `${i}.path`, `Operation ${i}: path must be /issueStatus or /text`)
      }
    }
    for (const change of changes) change()
    ctx.body = { data: comment }
  })

  return router
}
