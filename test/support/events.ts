// Builders for webhook bodies in tests: every field of section 2.6, signed as the service signs.
import { signBody } from '../../src/protocol/webhook-signature.js'

export function language(id: string) {
  return { id, name: id, editorCode: id, twoLettersCode: id.slice(0, 2), threeLettersCode: id, locale: id, androidCode: id, osxCode: id, osxLocale: id, textDirection: 'ltr', dialectOf: null }
}

export function recalculationEvent(o: { stringId: number; text?: string; languageId?: string; moduleKey?: string; stepId?: number; projectId?: number; revision?: number; organizationId?: string }) {
  const projectId = o.projectId ?? 7
  return {
    event: 'string.status_on_step.recalculation_triggered',
    stringStatus: {
      status: 'NEED_PROCESS',
      output: '',
      originEvent: 'string.added',
      organizationId: o.organizationId ?? '200000',
      translation: {
        id: o.stringId, identifier: `key.${o.stringId}`, key: `key.${o.stringId}`, text: o.text ?? `Text ${o.stringId}`, type: 'text', context: '', maxLength: '0',
        isHidden: false, isDuplicate: false, masterStringId: null, revision: o.revision ?? 1, hasPlurals: false, labelIds: [],
        url: `https://example.test/s/${o.stringId}`, createdAt: '2026-01-01T00:00:00+00:00', updatedAt: null,
        file: { id: 3, name: 'ui.json', title: null, type: 'json', path: '/ui.json', status: 'active', revision: '1', branch: { id: null }, directory: { id: null }, project: null },
        project: { id: projectId, userId: 1, sourceLanguageId: 'en', targetLanguageIds: ['de', 'fr'], identifier: 'p', name: 'P', createdAt: '2026-01-01T00:00:00+00:00', updatedAt: '2026-01-01T00:00:00+00:00', lastActivity: '2026-01-01T00:00:00+00:00', description: '', url: 'https://example.test/p', cname: null, languageAccessPolicy: null, visibility: null, publicDownloads: null, logo: 'data:image/png;base64,', isExternal: false, externalType: null, hasCrowdsourcing: false, groupId: 0 },
      },
      sourceLanguage: language('en'),
      affectedLanguage: language(o.languageId ?? 'de'),
      workflowStep: { id: o.stepId ?? 11, title: 'QA', type: 'Application', languages: ['de', 'fr'], applicationModule: { applicationIdentifier: 'switchyard', moduleKey: o.moduleKey ?? 'test-step' } },
      user: { id: '1', username: 'u', fullName: 'U', avatarUrl: 'https://example.test/a.png' },
    },
  }
}

export function signedRequest(body: string | Buffer, secret: string, o: { moduleKey?: string; prefix?: string; domain?: string; orgId?: string } = {}) {
  const p = o.prefix ?? 'X-Service-'
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Service-Webhook',
      [`${p}Id`]: o.orgId ?? '200000',
      [`${p}Domain`]: o.domain ?? 'acme',
      [`${p}Signature`]: signBody(body, secret),
      'X-Module-Key': o.moduleKey ?? 'switchyard-webhook',
    },
    body,
  }
}

/** The JSON error body the worker answers refusals with. */
export async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  return ((await res.json()) as { error: { code: string; message: string } }).error
}
