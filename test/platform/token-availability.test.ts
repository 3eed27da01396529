// Which token errors make an organization's strings wait (held) rather than fail, what the static
// provider hands out, and the keyed lock the token manager refreshes under.
import { describe, expect, it } from 'vitest'
import { NotConnectedError, OrganizationDisconnectedError, TokenEndpointError } from '../../src/platform/token-errors.js'
import { createLocalLock } from '../../src/platform/token-lock.js'
import { isOrganizationUnavailable, OrganizationUnavailableError, StaticTokenProvider } from '../../src/platform/token-provider.js'

describe('isOrganizationUnavailable', () => {
  it('is true for no connection, a dead connection and a token endpoint worth retrying', () => {
    expect(isOrganizationUnavailable(new OrganizationUnavailableError('acme', 'no token'))).toBe(true)
    expect(isOrganizationUnavailable(new NotConnectedError('acme'))).toBe(true)
    expect(isOrganizationUnavailable(new OrganizationDisconnectedError('acme', 'refused'))).toBe(true)
    expect(isOrganizationUnavailable(new TokenEndpointError('503', { retryable: true, status: 503 }))).toBe(true)
  })

  it('is false for a token endpoint refusal that retrying will not fix, and for anything else', () => {
    expect(isOrganizationUnavailable(new TokenEndpointError('400', { retryable: false, status: 400 }))).toBe(false)
    expect(isOrganizationUnavailable(new Error('boom'))).toBe(false)
    expect(isOrganizationUnavailable(Object.assign(new Error('x'), { code: 'TOKEN_ENDPOINT' }))).toBe(false)
    expect(isOrganizationUnavailable(Object.assign(new Error('x'), { code: 'ECONNRESET', retryable: true }))).toBe(false)
    expect(isOrganizationUnavailable(null)).toBe(false)
    expect(isOrganizationUnavailable(undefined)).toBe(false)
  })
})

describe('token errors', () => {
  it('tell the operator where to connect the organization, and name themselves', () => {
    const never = new NotConnectedError('acme corp')
    expect(never).toMatchObject({ name: 'NotConnectedError', code: 'NOT_CONNECTED', retryable: false, domain: 'acme corp' })
    expect(never.message).toBe('organization "acme corp" is not connected: open the operator page and connect it (/oauth/start?domain=acme%20corp)')
    const gone = new OrganizationDisconnectedError('acme', 'refresh token refused')
    expect(gone).toMatchObject({ name: 'OrganizationDisconnectedError', code: 'ORGANIZATION_DISCONNECTED', retryable: false, reason: 'refresh token refused' })
    expect(gone.message).toBe('organization "acme" is disconnected (refresh token refused): reconnect it from the operator page (/oauth/start?domain=acme)')
    const endpoint = new TokenEndpointError('down', { retryable: true, status: 502, oauthError: 'server_error' })
    expect(endpoint).toMatchObject({ name: 'TokenEndpointError', code: 'TOKEN_ENDPOINT', retryable: true, status: 502, oauthError: 'server_error' })
    const unavailable = new OrganizationUnavailableError('acme', 'no token')
    expect(unavailable).toMatchObject({ name: 'OrganizationUnavailableError', domain: 'acme', message: 'organization "acme" is not connected: no token' })
  })
})

describe('StaticTokenProvider', () => {
  it("hands out the organization's token, or the '*' one, and can't refresh", async () => {
    const provider = new StaticTokenProvider(new Map([['acme', 'tok-acme'], ['*', 'tok-any']]))
    expect(await provider.getAccessToken('acme')).toBe('tok-acme')
    expect(await provider.getAccessToken('beta')).toBe('tok-any')
    await expect(provider.refreshAfterUnauthorized('acme')).rejects.toThrow(/cannot be refreshed/)
    const none = new StaticTokenProvider(new Map([['acme', 'tok-acme']]))
    const error = await none.getAccessToken('beta').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OrganizationUnavailableError)
    expect(isOrganizationUnavailable(error)).toBe(true)
  })
})

describe('createLocalLock', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

  it('runs the callers of one key one after another, and other keys at once', async () => {
    const lock = createLocalLock()
    const order: string[] = []
    let release: () => void = () => {}
    const first = lock('a', async () => {
      order.push('a1 start')
      await new Promise<void>((resolve) => (release = resolve))
      order.push('a1 end')
      return 1
    })
    const second = lock('a', async () => (order.push('a2'), 2))
    const other = lock('b', async () => (order.push('b'), 3))
    await tick()
    expect(order).toEqual(['a1 start', 'b'])
    release()
    expect(await Promise.all([first, second, other])).toEqual([1, 2, 3])
    expect(order).toEqual(['a1 start', 'b', 'a1 end', 'a2'])
  })

  it('lets the next caller run after one that failed, and passes the failure to its own caller', async () => {
    const lock = createLocalLock()
    const failed = lock('a', async () => {
      await tick()
      throw new Error('refresh failed')
    })
    const next = lock('a', async () => 'ran')
    await expect(failed).rejects.toThrow('refresh failed')
    expect(await next).toBe('ran')
  })

  it('waits for the caller before it even when that one is still queued', async () => {
    const lock = createLocalLock()
    const order: number[] = []
    const runs = [1, 2, 3].map((n) => lock('k', async () => {
      await tick()
      order.push(n)
    }))
    await Promise.all(runs)
    expect(order).toEqual([1, 2, 3])
    // Reusable once everyone is done.
    expect(await lock('k', async () => 'again')).toBe('again')
  })

  it('makes a caller that arrives while the second one runs wait for it, after the first is done', async () => {
    const lock = createLocalLock()
    const order: string[] = []
    let releaseSecond: () => void = () => {}
    const first = lock('k', async () => void order.push('first'))
    const second = lock('k', async () => {
      order.push('second start')
      await new Promise<void>((resolve) => (releaseSecond = resolve))
      order.push('second end')
    })
    await first
    await tick()
    expect(order).toEqual(['first', 'second start'])
    const third = lock('k', async () => void order.push('third'))
    await tick()
    expect(order).toEqual(['first', 'second start'])
    releaseSecond()
    await Promise.all([second, third])
    expect(order).toEqual(['first', 'second start', 'second end', 'third'])
  })
  it('forgets a key once nobody holds or waits for it, so a long-running worker does not keep every organization it ever saw', async () => {
    const held = new Map<string, Promise<unknown>>()
    const lock = createLocalLock(held)
    let release: () => void = () => {}
    const first = lock('acme', async () => {
      await new Promise<void>((resolve) => (release = resolve))
      return 'first'
    })
    const second = lock('acme', async () => 'second')
    await tick()
    expect([...held.keys()]).toEqual(['acme'])
    release()
    expect(await first).toBe('first')
    expect(await second).toBe('second')
    expect(held.size).toBe(0)

    await Promise.all(Array.from({ length: 50 }, (_, i) => lock(`org-${i}`, async () => i)))
    await expect(lock('beta', async () => { throw new Error('refresh failed') })).rejects.toThrow('refresh failed')
    expect(held.size).toBe(0)
  })
})
