// Turning a decoded batch (decode-batch.ts: the string events reduced to arrays) into jobs, one
// per string and target language, on the main thread. Everything has been validated by then.
import type { Language } from '../engine/types.js'
import type { Job } from '../queue/job.js'
import { jobKeyOf } from '../queue/job.js'
import { languageKey, type DecodedJobs } from './decode-batch.js'

// Language records repeat in every event of a batch; share one object per distinct record so a
// queue of thousands of jobs holds a handful of them. Bounded: languages are few.
const languages = new Map<string, Language>()
function intern(language: Language): Language {
  const k = languageKey(language)
  const known = languages.get(k)
  if (known) return known
  if (languages.size > 2000) languages.clear()
  languages.set(k, language)
  return language
}

export interface BatchOrigin {
  organizationId: string
  domain: string
  batchId: string
}

/** The jobs of a decoded batch (`text`: the JSON text `decodeBatch` returned as `jobs`). */
export function toJobs(text: string, origin: BatchOrigin): Job[] {
  if (!text) return []
  const decoded = JSON.parse(text) as DecodedJobs
  const langs = decoded.languages.map(intern)
  const jobs: Job[] = new Array(decoded.jobs.length)
  for (let i = 0; i < decoded.jobs.length; i++) {
    const [organizationId, moduleKey, projectId, stepId, languageId, stringId, revision, key, context, maxLength, text, isPlural, fileType, filePath, labelIds, source, target, invalid] =
      decoded.jobs[i]!
    const job: Job = {
      key: '',
      organizationId: origin.organizationId || organizationId,
      domain: origin.domain,
      moduleKey,
      projectId,
      stepId,
      languageId,
      stringId,
      revision,
      string: { key, context, maxLength, text, isPlural: isPlural === 1, fileType, filePath, labelIds },
      sourceLanguage: langs[source]!,
      targetLanguage: langs[target]!,
      batchId: origin.batchId,
      attempts: 0,
    }
    if (invalid) job.invalid = invalid
    job.key = jobKeyOf(job)
    jobs[i] = job
  }
  return jobs
}
