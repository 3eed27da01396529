import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from '../../src/emulator/index.js'

let emu: Emulator
let token: string

beforeAll(async () => {
  emu = await startEmulator({ strings: 60, languages: ['de', 'fr'] })
  token = (await emu.authorizeDirect()).access_token
})
afterAll(async () => {
  await emu.stop()
})
beforeEach(() => {
  emu.seed()
})

const statusPath = (lang = 'de', step = emu.sample.step.id, project = emu.sample.project.id) =>
  `/api/v2/projects/${project}/workflow-steps/${step}/languages/${lang}/status`

async function call(method: string, path: string, body?: unknown, auth: string | null = token, type = 'application/json') {
  const headers: Record<string, string> = {}
  if (auth !== null) headers.authorization = `Bearer ${auth}`
  if (body !== undefined) headers['content-type'] = type
  const res = await fetch(new URL(path, emu.url), { method, headers, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined }
}

const replace = (id: number, value: unknown) => ({ op: 'replace', path: `/${id}/output`, value })

describe('PATCH string status', () => {
  it('routes a string to a declared port: DONE, with the 2.7 record', async () => {
    const id = emu.sample.strings[0]!.id
    const res = await call('PATCH', statusPath(), [replace(id, 'approved')])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [{ data: { stringId: id, languageId: 'de', stepId: emu.sample.step.id, status: 'DONE', output: 'approved' } }] })
    expect(emu.status(id, 'de')).toMatchObject({ status: 'DONE', output: 'approved', patches: 1, outputs: ['approved'] })
    expect(emu.status(id, 'fr')).toMatchObject({ status: 'NEED_PROCESS', output: '', patches: 0 })
  })

  it('parks a string as TODO with ""', async () => {
    const id = emu.sample.strings[1]!.id
    const res = await call('PATCH', statusPath('fr'), [replace(id, '')])
    expect(res.body.data[0].data).toMatchObject({ status: 'TODO', output: '' })
    expect(emu.status(id, 'fr')!.status).toBe('TODO')
  })

  it('records every PATCH; a second output for one arrival is a mistake and changes nothing', async () => {
    emu.clearMistakes()
    const id = emu.sample.strings[2]!.id
    await call('PATCH', statusPath(), [replace(id, 'approved')])
    expect(emu.mistakes()).toEqual([])
    const again = await call('PATCH', statusPath(), [replace(id, 'translated')])
    // Answered 200 with the status as it is: the interface document names no error for it.
    expect(again.status).toBe(200)
    expect(again.body.data[0].data).toMatchObject({ status: 'DONE', output: 'approved' })
    expect(emu.status(id, 'de')).toMatchObject({ patches: 2, outputs: ['approved'], arrivals: 1, answered: 1 })
    expect(emu.mistakes().map((m) => [m.kind, m.organizationId])).toEqual([['second-output', '200000']])
    expect(() => emu.assertNoMistakes()).toThrow(/second-output/)
    emu.clearMistakes()
  })

  it('routes a string again on each arrival: a send-back makes it NEED_PROCESS with a new arrival', async () => {
    emu.clearMistakes()
    const id = emu.sample.strings[2]!.id
    await call('PATCH', statusPath(), [replace(id, 'translated')])
    expect(emu.sendBack({ stringIds: [id], languageId: 'de' })).toEqual([{ stringId: id, languageId: 'de' }])
    expect(emu.status(id, 'de')).toMatchObject({ status: 'NEED_PROCESS', arrivals: 2, answered: 1 })
    await call('PATCH', statusPath(), [replace(id, 'approved')])
    expect(emu.status(id, 'de')).toMatchObject({ status: 'DONE', output: 'approved', outputs: ['translated', 'approved'], arrivals: 2, answered: 2 })
    expect(emu.statuses({ conflicting: true }).map((s) => s.stringId)).toEqual([id])
    emu.assertNoMistakes()
  })

  it('records a PATCH for a string that is not waiting (FAILED) as a mistake', async () => {
    emu.clearMistakes()
    const id = emu.sample.strings[4]!.id
    emu.org().statuses.set(id, 'de', 'FAILED')
    const res = await call('PATCH', statusPath(), [replace(id, 'approved')])
    expect(res.status).toBe(200)
    expect(emu.status(id, 'de')!.status).toBe('FAILED')
    expect(emu.mistakes().map((m) => m.kind)).toEqual(['patch-not-waiting'])
    emu.clearMistakes()
  })

  it.each([
    ['not JSON', '{nope', /JSON/],
    ['not an array', { op: 'replace' }, /array/],
    ['empty', [], /At least one/],
    ['wrong op', [{ op: 'add', path: '/100001/output', value: 'approved' }], /replace/],
    ['bad path', [{ op: 'replace', path: '/100001/status', value: 'approved' }], /shape/],
    ['value not a string', [{ op: 'replace', path: '/100001/output', value: 3 }], /string/],
    ['undeclared port', [{ op: 'replace', path: '/100001/output', value: 'published' }], /not an output/],
    ['unknown string', [{ op: 'replace', path: '/999/output', value: 'approved' }], /not on workflow step/],
  ])('answers 400 with a reason for %s, and changes nothing', async (_name, body, reason) => {
    const ok = replace(emu.sample.strings[3]!.id, 'approved')
    const payload = Array.isArray(body) && body.length ? [ok, ...body] : body
    const res = await call('PATCH', statusPath(), payload)
    expect(res.status).toBe(400)
    expect(res.body.errors[0].error.errors[0].message).toMatch(reason)
    expect(emu.status(emu.sample.strings[3]!.id, 'de')!.status).toBe('NEED_PROCESS')
  })

  it('answers 400 beyond 500 operations and 415 without a JSON content type', async () => {
    const ops = Array.from({ length: 501 }, () => replace(emu.sample.strings[0]!.id, 'approved'))
    expect((await call('PATCH', statusPath(), ops)).status).toBe(400)
    expect((await call('PATCH', statusPath(), [replace(emu.sample.strings[0]!.id, 'approved')], token, 'text/plain')).status).toBe(415)
  })

  it('answers 404 for a language outside the step, an unknown step or project', async () => {
    const body = [replace(emu.sample.strings[0]!.id, 'approved')]
    expect((await call('PATCH', statusPath('ja'), body)).status).toBe(404)
    expect((await call('PATCH', statusPath('de', 1), body)).status).toBe(404)
    expect((await call('PATCH', statusPath('de', emu.sample.step.id, 1), body)).status).toBe(404)
  })

  it('answers 401 without a token, with an unknown one and with an expired one', async () => {
    const body = [replace(emu.sample.strings[0]!.id, 'approved')]
    expect((await call('PATCH', statusPath(), body, null)).status).toBe(401)
    expect((await call('PATCH', statusPath(), body, 'made.up.token')).status).toBe(401)
    const short = (await emu.authorizeDirect()).access_token
    expect((await call('GET', statusPath(), undefined, short)).status).toBe(200)
    emu.configure({ faults: { tokenTtlSeconds: 0 } })
    try {
      const res = await call('PATCH', statusPath(), body, short)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/)
    } finally {
      emu.configure({ faults: { tokenTtlSeconds: null } })
    }
    const other = (await emu.authorizeDirect()).access_token
    emu.expireAccessTokens()
    expect((await call('GET', statusPath(), undefined, other)).status).toBe(401)
    token = (await emu.authorizeDirect()).access_token
  })
})

describe('GET string status', () => {
  it('pages with limit and offset (default 25, max 500)', async () => {
    const all = emu.sample.strings.map((s) => s.id)
    const first = await call('GET', statusPath())
    expect(first.body.data).toHaveLength(25)
    expect(first.body.data[0].data).toEqual({ stringId: all[0], languageId: 'de', stepId: emu.sample.step.id, status: 'NEED_PROCESS', output: '' })
    const page = await call('GET', `${statusPath()}?limit=10&offset=50`)
    expect(page.body.data.map((d: { data: { stringId: number } }) => d.data.stringId)).toEqual(all.slice(50, 60))
    expect((await call('GET', `${statusPath()}?limit=501`)).status).toBe(400)
    expect((await call('GET', `${statusPath()}?limit=abc`)).status).toBe(400)
  })

  it('filters by status and stringIds', async () => {
    const [a, b, c] = emu.sample.strings.map((s) => s.id)
    await call('PATCH', statusPath(), [replace(a!, 'approved'), replace(b!, '')])
    const done = await call('GET', `${statusPath()}?status=DONE&limit=500`)
    expect(done.body.data.map((d: { data: { stringId: number } }) => d.data.stringId)).toEqual([a])
    const need = await call('GET', `${statusPath()}?status=NEED_PROCESS&limit=500`)
    expect(need.body.data).toHaveLength(emu.sample.strings.length - 2)
    const some = await call('GET', `${statusPath()}?stringIds=${c},${b},424242`)
    expect(some.body.data.map((d: { data: { stringId: number; status: string } }) => [d.data.stringId, d.data.status])).toEqual([[c, 'NEED_PROCESS'], [b, 'TODO']])
    expect((await call('GET', `${statusPath()}?status=WHATEVER`)).status).toBe(400)
    expect((await call('GET', `${statusPath()}?stringIds=1,x`)).status).toBe(400)
    const many = Array.from({ length: 501 }, (_, i) => i + 1).join(',')
    expect((await call('GET', `${statusPath()}?stringIds=${many}`)).status).toBe(400)
  })
})

describe('translations', () => {
  const path = (lang: string, query: string) => `/api/v2/projects/${emu.sample.project.id}/languages/${lang}/translations?${query}`

  it('returns texts, and plural forms for plural strings', async () => {
    const plain = emu.sample.strings.find((s) => !s.hasPlurals)!
    const plural = emu.sample.strings.find((s) => s.hasPlurals)!
    const res = await call('GET', path('fr', `stringIds=${plain.id},${plural.id}&limit=500`))
    expect(res.status).toBe(200)
    const [p, q] = res.body.data.map((d: { data: unknown }) => d.data)
    expect(p).toMatchObject({ stringId: plain.id, contentType: 'text/plain', text: plain.translations.get('fr')!.text })
    expect(typeof p.translationId).toBe('number')
    expect(p.user).toMatchObject({ username: 'tom.translator' })
    expect(typeof p.createdAt).toBe('string')
    expect(q.text).toBeUndefined()
    expect(q.plurals.map((f: { plural: string }) => f.plural)).toEqual(['one', 'many', 'other'])
  })

  it('answers 400 for more than 500 ids, 404 for a language outside the project, 401 without a token', async () => {
    const many = emu.sample.strings.map((s) => s.id)
    while (many.length <= 500) many.push(many.length + 1)
    expect((await call('GET', path('de', `stringIds=${many.join(',')}`))).status).toBe(400)
    expect((await call('GET', path('de', 'limit=501'))).status).toBe(400)
    expect((await call('GET', path('ja', 'stringIds=100001'))).status).toBe(404)
    expect((await call('GET', path('de', 'stringIds=100001'), undefined, null)).status).toBe(401)
  })

  it('pages through all translations without stringIds', async () => {
    const res = await call('GET', path('de', 'limit=500'))
    expect(res.body.data).toHaveLength(emu.sample.strings.length)
  })

  it('keeps a source edit in the translation a translator fixes when the string is sent back, and in the defect put back after', async () => {
    // Plain texts with a defect in both languages: fixed on a send-back, then broken again.
    const strings = emu.sample.strings.filter((s) => !s.hasPlurals && [...s.translations.values()].every((t) => t.defect !== null)).slice(0, 3)
    expect(strings.length).toBeGreaterThan(0)
    const ids = strings.map((s) => s.id)
    const texts = async (lang: string) => ((await call('GET', path(lang, `stringIds=${ids.join(',')}&limit=500`))).body.data as Array<{ data: { stringId: number; text: string } }>).map((d) => d.data.text)
    emu.editSource({ stringIds: ids, append: ' 42' })
    for (const id of ids) for (const lang of ['de', 'fr']) await call('PATCH', statusPath(lang), [replace(id, 'approved')])
    // Each arrival is work on the translation as it is now (platform notes): the translator's fix
    // is a correct translation of the edited source, not of the source before the edit.
    expect(emu.sendBack({ stringIds: ids })).toHaveLength(2 * ids.length)
    for (const lang of ['de', 'fr']) {
      const correct = strings.map((s) => `${s.template.translations[lang as 'de' | 'fr'] as string} 42`)
      expect(await texts(lang), lang).toEqual(correct)
      for (const s of strings) expect(s.translations.get(lang)).toMatchObject({ defect: null, expected: emu.sample.passOutput })
    }
    for (const id of ids) for (const lang of ['de', 'fr']) await call('PATCH', statusPath(lang), [replace(id, 'approved')])
    emu.sendBack({ stringIds: ids, breakAgain: true })
    for (const lang of ['de', 'fr']) for (const text of await texts(lang)) expect(text, lang).toMatch(/ 42$/)
    // A second edit after the fix: the defect put back carries both.
    for (const id of ids) for (const lang of ['de', 'fr']) await call('PATCH', statusPath(lang), [replace(id, 'approved')])
    emu.sendBack({ stringIds: ids })
    emu.editSource({ stringIds: ids, append: ' 7' })
    for (const id of ids) for (const lang of ['de', 'fr']) await call('PATCH', statusPath(lang), [replace(id, 'approved')])
    emu.sendBack({ stringIds: ids, breakAgain: true })
    for (const lang of ['de', 'fr']) for (const text of await texts(lang)) expect(text, lang).toMatch(/ 42 7$/)
  })
})
