// The metric label of an event name: the names the service is known to send, and `other` for
// anything else. Event names come from signed but otherwise free text; as labels they would make
// one time series each, without bound.
import { RECALCULATION_EVENT } from '../protocol/service-events.js'

export const KNOWN_EVENTS: ReadonlySet<string> = new Set([
  RECALCULATION_EVENT,
  'project.translated',
  'project.approved',
  'project.built',
  'file.added',
  'file.updated',
  'file.reverted',
  'file.deleted',
  'file.translated',
  'file.approved',
  'string.added',
  'string.updated',
  'string.deleted',
  'translation.updated',
  'suggestion.added',
  'suggestion.updated',
  'suggestion.deleted',
  'suggestion.approved',
  'suggestion.disapproved',
  'stringComment.created',
  'stringComment.updated',
  'stringComment.deleted',
  'stringComment.restored',
  'task.added',
  'task.statusChanged',
  'task.updated',
  'task.deleted',
])

export function eventLabel(name: string): string {
  return KNOWN_EVENTS.has(name) ? name : 'other'
}
