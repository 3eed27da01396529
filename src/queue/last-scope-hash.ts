// The scope hashed last (the de-duplication's and the shared filter of finished strings' probes).
import { scopeHash } from './finished-filter.js'

/** What names a scope: organization, project, step, language. */
interface Scope { organizationId: string; projectId: number; stepId: number; languageId: string }

/**
 * scopeHash of the scope asked last, kept: a group's strings share their scope, so its key is
 * built and hashed once a group, not once a string.
 */
export class LastScopeHash {
  private last: Scope & { hash: number } = { organizationId: '', projectId: -1, stepId: -1, languageId: '', hash: 0 }

  of(s: Scope): number {
    const h = this.last
    if (h.organizationId === s.organizationId && h.projectId === s.projectId && h.stepId === s.stepId && h.languageId === s.languageId) return h.hash
    const hash = scopeHash(`${s.organizationId}|${s.projectId}|${s.stepId}|${s.languageId}`)
    this.last = { organizationId: s.organizationId, projectId: s.projectId, stepId: s.stepId, languageId: s.languageId, hash }
    return hash
  }
}
