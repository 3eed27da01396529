// `switchyard try` reads a webhook batch body through the worker's own decoder and builds items
// the one way the worker does: the same event gives the same item in both (key included: `key`,
// else `identifier`), and an event the worker would park is refused by `try`, not guessed at.
import { afterEach, describe, expect, it } from 'vitest'
import { itemsFromInput } from '../../src/cli/try.js'
import type { Item } from '../../src/engine/types.js'
import { recalculationEvent, signedRequest } from '../support/events.js'
import { fakePipelines, fakeServiceFetch } from '../support/fake-pipelines.js'
import { SECRET, startTestWorker } from '../support/start-test-worker.js'

const running: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  while (running.length) await running.pop()!.stop()
})

/** Events that exercise every field an item takes from an event, and the ways they may be absent. */
function body() {
  const plain = recalculationEvent({ stringId: 1, text: 'Save file' })
  // No `key`: the key is the identifier. A null revision, context and file; a limit as a string.
  const noKey = recalculationEvent({ stringId: 2, text: 'Open', revision: 3 })
  const t2 = noKey.stringStatus.translation as Record<string, unknown>
  delete t2.key
  Object.assign(t2, { identifier: 'menu.open', revision: null, context: null, maxLength: '12', file: null, hasPlurals: true, labelIds: [4, 9] })
  // Both a key and an identifier: the key wins.
  const both = recalculationEvent({ stringId: 3, text: 'Close', languageId: 'de' })
  Object.assign(both.stringStatus.translation, { key: 'dialog.close', identifier: 'close-id', context: 'A button', maxLength: 20 })
  return { events: [plain, noKey, both, { event: 'project.translated', project: { id: 7 } }] }
}

/** An item without what belongs to the run rather than the string. */
const comparable = ({ log: _log, signal: _signal, ...rest }: Item) => rest

describe('switchyard try and the worker', () => {
  it('build the same item from the same webhook event', async () => {
    const seen: Item[] = []
    const w = await startTestWorker({ pipelines: fakePipelines('test-step', (item) => (seen.push(item), 'approved')), fetch: fakeServiceFetch().fetch })
    running.push(w)
    const json = JSON.stringify(body())
    const res = await fetch(`${w.url}/webhooks`, signedRequest(json, SECRET))
    expect(res.status).toBe(200)
    await w.idle()

    const tried = itemsFromInput(JSON.parse(json), new AbortController().signal)
    expect(tried.map((t) => t.id)).toEqual([1, 2, 3])
    const byId = new Map(seen.map((i) => [i.id, comparable(i)]))
    expect(byId.size).toBe(3)
    for (const t of tried) expect(comparable(t.item)).toEqual(byId.get(t.item.id))
    expect(tried.map((t) => t.item.key)).toEqual(['key.1', 'menu.open', 'dialog.close'])
    expect(byId.get(2)).toMatchObject({ context: '', maxLength: 12, isPlural: true, fileType: '', filePath: '', labelIds: [4, 9] })
  })

  it('refuses what the worker would refuse or park, naming every event', () => {
    const b = body() as { events: Array<{ stringStatus: { translation: unknown } }> }
    delete (b.events[0]!.stringStatus.translation as Record<string, unknown>).text
    ;(b.events[2]!.stringStatus.translation as Record<string, unknown>).revision = 'two'
    expect(() => itemsFromInput(b, new AbortController().signal)).toThrow(/\/events\/0\/stringStatus\/translation: missing field "text"\n\s+\/events\/2\/stringStatus\/translation\/revision: must be integer/)
    expect(() => itemsFromInput({ events: 'none' }, new AbortController().signal)).toThrow(/\/events: must be array/)
  })
})
