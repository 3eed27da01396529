// The seeded sample project: an organization, a project with files of several types, a custom
// workflow step and N strings built from the phrase table, each with a translation per target
// language and the verdict a strict QA gate should reach. Deterministic from the seed; cheap
// enough for hundreds of thousands of strings (one small object per string and language).
import type { WorkflowStep } from '../protocol/service-events.js'
import { PHRASES, PLURAL_CATEGORIES, type FileKind, type PhraseTemplate, type PluralForms, type TargetCode } from './phrases.js'
import { SERVICE_LANGUAGES, serviceLanguage } from './service-languages.js'

/**
 * Planted defects. Each is one visible change that exactly one check of the shipped `qa-gate`
 * pipeline (the `standard` preset) reports as an error: `DEFECT_CHECK` names it.
 */
export type DefectKind =
  | 'dropped-placeholder' | 'broken-tag' | 'empty' | 'double-space'
  | 'broken-icu' | 'empty-plural-form' | 'lost-code-span' | 'too-long' | 'changed-number' | 'changed-url'
  | 'unclosed-bracket' | 'unescaped-quote' | 'lost-accelerator' | 'doubled-word'

/** The qa-gate check that catches each defect, and no other check does. */
export const DEFECT_CHECK: Readonly<Record<DefectKind, string>> = {
  'lost-code-span': 'markdown',
  'lost-accelerator': 'accelerators',
  'unescaped-quote': 'escapes',
  'changed-url': 'urls',
  'unclosed-bracket': 'brackets',
  'broken-icu': 'icu',
  'empty-plural-form': 'plurals',
  'too-long': 'length',
  'changed-number': 'numbers',
  'broken-tag': 'tags',
  'dropped-placeholder': 'placeholders',
  'doubled-word': 'double-words',
  'double-space': 'whitespace',
  'empty': 'empty',
}

/**
 * Every defect kind, the ones few phrases can carry first: the first cycle through the phrase table
 * plants each kind a language has not had yet in this order (see createSampleProject).
 */
export const DEFECT_KINDS = Object.keys(DEFECT_CHECK) as DefectKind[]

export interface PluralText { plural: string; text: string }

export interface SampleTranslation {
  languageId: string
  translationId: number
  /** The translation; for plural strings the `other` form. */
  text: string
  /** All forms, for plural strings (Android plurals). */
  plurals?: PluralText[]
  defect: DefectKind | null
  /** The output port a correct QA gate routes this (string, language) to. */
  expected: string
  createdAt: string
  /** The defective version this translation had before a translator fixed it (kept to break it again). */
  broken?: { text: string; plurals?: PluralText[]; defect: DefectKind; expected: string }
}

export interface SampleString {
  id: number
  key: string
  /** Source text as sent in the webhook; the `other` form for plural strings. */
  text: string
  sourcePlurals?: PluralText[]
  type: 'text' | 'icu' | 'plural'
  hasPlurals: boolean
  context: string
  maxLength: number
  fileId: number
  labelIds: number[]
  revision: number
  /**
   * What source edits (editSource) appended to the text since it was built: a translation a
   * translator saves later (a fix, a defect put back) carries it too, as it did when it was edited.
   */
  appended?: string
  createdAt: string
  template: PhraseTemplate
  translations: Map<string, SampleTranslation>
}

export interface SampleFile {
  id: number
  name: string
  title: string | null
  type: FileKind
  path: string
  status: string
  revision: string
  branch: { id: number | null }
  directory: { id: number | null }
}

/** The custom step as the emulated service describes it: what events carry, and its title, type and languages. */
export interface SampleStep extends WorkflowStep {
  title: string
  type: string
  languages: string[]
  applicationModule: { applicationIdentifier: string; moduleKey: string }
}

export interface SampleProjectRecord {
  id: number
  userId: number
  sourceLanguageId: string
  targetLanguageIds: string[]
  identifier: string
  name: string
  createdAt: string
  updatedAt: string
  lastActivity: string
  description: string
  url: string
  cname: string | null
  languageAccessPolicy: null
  visibility: null
  publicDownloads: null
  logo: string
  isExternal: boolean
  externalType: null
  hasCrowdsourcing: boolean
  groupId: number
}

export interface SampleUser { id: string; username: string; fullName: string; avatarUrl: string }

export interface SampleProject {
  seed: number
  organization: { id: string; domain: string }
  project: SampleProjectRecord
  files: Map<number, SampleFile>
  step: SampleStep
  /** Output ports the step declares. */
  outputs: string[]
  passOutput: string
  failOutput: string
  sourceLanguageId: string
  languages: string[]
  /** Sorted by id. */
  strings: SampleString[]
  byId: Map<number, SampleString>
  /** The manager whose action put the strings on the step (event `user`). */
  user: SampleUser
  /** The translator of every sample translation. */
  translator: SampleUser
}

export interface SeedOptions {
  /** Seed of every choice; the same seed gives the same project. Default 1. */
  seed?: number
  /** Number of strings. Default 200. */
  strings?: number
  /** Target languages (de, fr, ja, ar, ru). Default de, fr. */
  languages?: string[]
  /** Fraction of (string, language) pairs that carry one defect. Default 0.2. */
  defectRate?: number
  /** Output ports of the step. Default approved, translated. */
  outputs?: string[]
  /** Port a correct translation should be routed to. Default the first output. */
  passOutput?: string
  /** Port a defective translation should be routed to. Default the second output. */
  failOutput?: string
  organizationId?: string
  domain?: string
  projectId?: number
  stepId?: number
  stepTitle?: string
  moduleKey?: string
  applicationIdentifier?: string
  /**
   * Strings added after the sample ones, each text as its source and as every translation (the
   * benchmark's adversarial texts). Their expected port is the failing one.
   */
  extraTexts?: string[]
  /**
   * The source of every extra string, when set: `extraTexts` are then only their translations, as
   * a translator would type them beside an ordinary source.
   */
  extraSource?: string
}

export const DEFAULT_SEED = {
  seed: 1,
  strings: 200,
  languages: ['de', 'fr'],
  defectRate: 0.2,
  outputs: ['approved', 'translated'],
  organizationId: '200000',
  domain: 'acme',
  projectId: 42,
  stepId: 7001,
  stepTitle: 'QA gate',
  moduleKey: 'qa-gate',
  applicationIdentifier: 'switchyard',
} as const

const FIRST_STRING_ID = 100_001
const BASE_TIME = Date.parse('2026-01-05T10:00:00.000Z')
const TINY_LOGO = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

const FILES: Record<FileKind, Omit<SampleFile, 'status' | 'revision' | 'branch'>> = {
  json: { id: 11, name: 'en.json', title: null, type: 'json', path: '/web/locales/en.json', directory: { id: 3 } },
  android: { id: 12, name: 'strings.xml', title: 'Android app', type: 'android', path: '/android/app/src/main/res/values/strings.xml', directory: { id: 4 } },
  macosx: { id: 13, name: 'Localizable.strings', title: null, type: 'macosx', path: '/ios/en.lproj/Localizable.strings', directory: { id: 5 } },
  xliff: { id: 14, name: 'help.xliff', title: 'Help center', type: 'xliff', path: '/docs/help.xliff', directory: { id: 6 } },
}

/** FNV-1a over a string, then a murmur finalizer: a stable hash in [0, 2^32). */
export function hash32(input: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < input.length; i++) {
    h ^= input.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A seeded PRNG (mulberry32) returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PLACEHOLDER = /\{\{\w+\}\}|%\d+\$[sd]|%[sd]|\{\w+\}/
const CLOSING_TAG = /<\/\w+>/
const TAG = /<\/?\w+[^>]*>/
/** A number of the text itself: not part of a placeholder (`%1$s`) or a word. */
const NUMBER = /(?<![\w%$#{])\d+(?![\w$}])/
const CODE_SPAN = /`[^`]+`/
const ACCELERATOR = /&(?=\p{L})/u
const ESCAPED_QUOTE = /\\"/g
const URL = /https?:\/\//
const OPEN_BRACKET = /[(（]/
const CLOSE_BRACKET = /[)）](?![\s\S]*[)）])/
const ICU_ONE = / one \{[^{}]*\}/
/** Words a language repeats on purpose (French "nous nous", German "Sie sie"): never doubled. */
const GRAMMATICAL_REPEATS = new Set(['nous', 'vous', 'sie', 'die', 'der', 'das'])

/** The last lowercase (or caseless, non-CJK) word between spaces: a repeat of it reads as a typo. */
function wordToDouble(text: string): { start: number; end: number } | null {
  let found: { start: number; end: number } | null = null
  for (const m of text.matchAll(/(?<=^|\s)[\p{Ll}\p{Lo}\p{M}]{2,}(?=\s|$)/gu)) {
    if (/[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]/u.test(m[0]) || GRAMMATICAL_REPEATS.has(m[0])) continue
    found = { start: m.index, end: m.index + m[0].length }
  }
  return found
}

/** Defects a (phrase, language) can carry. Computed once per phrase and language. */
function applicableDefects(template: PhraseTemplate, languageId: TargetCode, type: SampleString['type']): DefectKind[] {
  const correct = template.translations[languageId]
  const text = typeof correct === 'string' ? correct : correct.other!
  const source = typeof template.source === 'string' ? template.source : template.source.other!
  const kinds: DefectKind[] = []
  if (CODE_SPAN.test(source) && CODE_SPAN.test(text)) kinds.push('lost-code-span')
  if (ACCELERATOR.test(source) && ACCELERATOR.test(text)) kinds.push('lost-accelerator')
  if (/\\"/.test(text)) kinds.push('unescaped-quote')
  if (URL.test(text)) kinds.push('changed-url')
  if (OPEN_BRACKET.test(source) && CLOSE_BRACKET.test(text)) kinds.push('unclosed-bracket')
  if (type === 'icu') kinds.push('broken-icu')
  // Japanese has only `other`, which is the translation itself: emptying it is the `empty` defect.
  if (typeof correct !== 'string' && PLURAL_CATEGORIES[languageId].includes('one')) kinds.push('empty-plural-form')
  // Repeating the text past the limit repeats its placeholders, tags and numbers too: only plain texts.
  if (template.maxLength && !PLACEHOLDER.test(text) && !TAG.test(text) && !/\d/.test(text)) kinds.push('too-long')
  if (NUMBER.test(text)) kinds.push('changed-number')
  if (CLOSING_TAG.test(text)) kinds.push('broken-tag')
  // In ICU messages the arguments are syntax, not text: a dropped `{count, plural` breaks parsing
  // rather than reading as a dropped placeholder, so only offer the defects a reviewer would see.
  if (type !== 'icu' && PLACEHOLDER.test(text)) kinds.push('dropped-placeholder')
  // Not where the repeat would also break the length limit.
  if (type !== 'icu' && wordToDouble(text) && !(template.maxLength && [...applyDefect(text, 'doubled-word')].length > template.maxLength)) kinds.push('doubled-word')
  kinds.push('double-space')
  // An empty translation also loses whatever else the text keeps (placeholders, tags, numbers, a
  // URL, code, an accelerator, escapes, brackets, ICU arguments): only plain texts get emptied.
  if (type === 'text' && !/[{}<>%\d`&\\()（）]|https?:/.test(text)) kinds.push('empty')
  return kinds
}

/**
 * Applies one defect to a correct text. `maxLength` is the string's limit (for `too-long`). For a
 * plural string, `empty-plural-form` empties the `one` form only (see createSampleProject).
 * Exported for tests.
 */
export function applyDefect(text: string, defect: DefectKind, maxLength = 0): string {
  switch (defect) {
    case 'empty':
    case 'empty-plural-form':
      return ''
    case 'double-space': {
      const at = text.lastIndexOf(' ')
      if (at >= 0) return `${text.slice(0, at)}  ${text.slice(at + 1)}`
      // No space (Japanese): between two letters near the middle, never inside a placeholder or tag.
      const masked = text.replace(/\{[^{}]*\}|<[^>]*>|%\d*\$?[sd]/g, (m) => '\0'.repeat(m.length))
      let middle = Math.max(1, Math.floor(text.length / 2))
      for (let at = middle; at < text.length; at++) {
        if (/\p{L}/u.test(masked[at - 1]!) && /\p{L}/u.test(masked[at]!)) { middle = at; break }
      }
      return `${text.slice(0, middle)}  ${text.slice(middle)}`
    }
    case 'dropped-placeholder': {
      const match = PLACEHOLDER.exec(text)
      if (!match) return text
      let start = match.index
      let end = start + match[0].length
      // Take one neighbouring space with it, so the defect stays a single one.
      if (text[end] === ' ') end++
      else if (start > 0 && text[start - 1] === ' ') start--
      return text.slice(0, start) + text.slice(end)
    }
    case 'broken-tag':
      return text.replace(CLOSING_TAG, '')
    case 'lost-code-span':
      return text.replace(CODE_SPAN, (code) => code.slice(1, -1))
    case 'lost-accelerator':
      return text.replace(ACCELERATOR, '')
    case 'unescaped-quote':
      return text.replace(ESCAPED_QUOTE, '"')
    case 'changed-url':
      return text.replace('https://', 'http://')
    case 'unclosed-bracket':
      return text.replace(CLOSE_BRACKET, '')
    case 'broken-icu':
      // Drop the `one` clause a language needs, or (Japanese: only `other`) rename `other`, which ICU requires.
      return ICU_ONE.test(text) ? text.replace(ICU_ONE, '') : text.replace(' other {', ' one {')
    case 'too-long': {
      let out = text
      while ([...out].length <= maxLength) out += ` / ${text}`
      return out
    }
    case 'changed-number':
      return text.replace(NUMBER, (n) => String(Number(n) + 1))
    case 'doubled-word': {
      const word = wordToDouble(text)
      if (!word) return text
      return `${text.slice(0, word.end)} ${text.slice(word.start)}`
    }
    default: {
      const never: never = defect
      throw new Error(`unknown defect ${String(never)}`)
    }
  }
}

function pluralList(forms: PluralForms, categories: readonly string[]): PluralText[] {
  return categories.map((plural) => {
    const text = forms[plural as keyof PluralForms]
    if (text === undefined) throw new Error(`phrase table: missing plural form ${plural}`)
    return { plural, text }
  })
}

function isoAt(offsetSeconds: number): string {
  return new Date(BASE_TIME + offsetSeconds * 1000).toISOString()
}

/** Builds the sample project. Throws on a language the phrase table lacks or on bad options. */
export function createSampleProject(options: SeedOptions = {}): SampleProject {
  const { seed, count, languages, defectRate, outputs, passOutput, failOutput } = checkedSeedOptions(options)
  const organization = { id: options.organizationId ?? DEFAULT_SEED.organizationId, domain: options.domain ?? DEFAULT_SEED.domain }
  const projectId = options.projectId ?? DEFAULT_SEED.projectId
  const files = new Map<number, SampleFile>()
  for (const file of Object.values(FILES)) {
    files.set(file.id, { ...file, status: 'active', revision: '3', branch: { id: null } })
  }
  const step: SampleStep = {
    id: options.stepId ?? DEFAULT_SEED.stepId,
    title: options.stepTitle ?? DEFAULT_SEED.stepTitle,
    type: 'Application',
    languages: [...languages],
    applicationModule: {
      applicationIdentifier: options.applicationIdentifier ?? DEFAULT_SEED.applicationIdentifier,
      moduleKey: options.moduleKey ?? DEFAULT_SEED.moduleKey,
    },
  }

  const planter = new StringPlanter(seed, languages, defectRate, passOutput, failOutput)
  const strings: SampleString[] = []
  for (let i = 0; i < count; i++) strings.push(planter.phraseString(i))
  for (const [j, text] of (options.extraTexts ?? []).entries()) strings.push(planter.extraString(count + j, j, text, options.extraSource))

  return {
    seed,
    organization,
    project: projectRecord(projectId, organization.domain, languages),
    files,
    step,
    outputs: [...outputs],
    passOutput,
    failOutput,
    sourceLanguageId: 'en',
    languages: [...languages],
    strings,
    byId: new Map(strings.map((str) => [str.id, str])),
    user: { id: '9001', username: 'maria.manager', fullName: 'Maria Manager', avatarUrl: `https://${organization.domain}.service.test/avatars/9001.png` },
    translator: { id: '9002', username: 'tom.translator', fullName: 'Tom Translator', avatarUrl: `https://${organization.domain}.service.test/avatars/9002.png` },
  }
}

/** The seed options createSampleProject needs, defaults filled in; throws on bad ones. */
function checkedSeedOptions(options: SeedOptions) {
  const seed = options.seed ?? DEFAULT_SEED.seed
  const count = options.strings ?? DEFAULT_SEED.strings
  const languages = options.languages ?? [...DEFAULT_SEED.languages]
  const defectRate = options.defectRate ?? DEFAULT_SEED.defectRate
  const outputs = options.outputs ?? [...DEFAULT_SEED.outputs]
  if (!Number.isInteger(count) || count < 0) throw new Error('emulator: strings must be a non-negative integer')
  if (!(defectRate >= 0 && defectRate <= 1)) throw new Error('emulator: defectRate must be between 0 and 1')
  if (languages.length === 0) throw new Error('emulator: at least one target language is needed')
  if (outputs.length === 0) throw new Error('emulator: the step needs at least one output port')
  for (const code of languages) {
    if (code === 'en') throw new Error('emulator: en is the source language, not a target')
    serviceLanguage(code)
  }
  const passOutput = options.passOutput ?? outputs[0]!
  const failOutput = options.failOutput ?? outputs[1] ?? outputs[0]!
  for (const port of [passOutput, failOutput]) {
    if (!outputs.includes(port)) throw new Error(`emulator: output "${port}" is not among the step's outputs (${outputs.join(', ')})`)
  }
  return { seed, count, languages, defectRate, outputs, passOutput, failOutput }
}

function projectRecord(projectId: number, domain: string, languages: string[]): SampleProjectRecord {
  return {
    id: projectId,
    userId: 9001,
    sourceLanguageId: 'en',
    targetLanguageIds: [...languages],
    identifier: `${domain}-web`,
    name: 'Acme Web App',
    createdAt: isoAt(-86_400 * 30),
    updatedAt: isoAt(-3600),
    lastActivity: isoAt(-60),
    description: 'Web, Android and iOS apps of Acme, plus the help center.',
    url: `https://${domain}.service.test/u/projects/${projectId}`,
    cname: null,
    languageAccessPolicy: null,
    visibility: null,
    publicDownloads: null,
    logo: TINY_LOGO,
    isExternal: false,
    externalType: null,
    hasCrowdsourcing: false,
    groupId: 3,
  }
}

/**
 * Builds the sample strings in order, with their translations and planted defects. Strings must be
 * asked for in index order: translation ids count up, and the first cycle through the phrase table
 * plants, per language, every defect kind not planted yet.
 */
class StringPlanter {
  /** A seeded permutation of the phrase table, cycled: every phrase appears once per cycle. */
  private readonly order: number[]
  private nextTranslationId = 5_000_001
  /** Defects each (phrase, language) can carry, computed once. */
  private readonly applicable = new Map<string, DefectKind[]>()
  /**
   * The kinds each language has not had yet: the first cycle through the table plants every kind a
   * phrase of it can carry (when defectRate > 0), so a project of at least PHRASES.length strings
   * exercises every check of qa-gate per language.
   */
  private readonly unplanted: Map<string, Set<DefectKind>>

  constructor(
    private readonly seed: number,
    private readonly languages: string[],
    private readonly defectRate: number,
    private readonly passOutput: string,
    private readonly failOutput: string,
  ) {
    const random = seededRandom(seed)
    this.order = PHRASES.map((_, i) => i)
    for (let i = this.order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[this.order[i], this.order[j]] = [this.order[j]!, this.order[i]!]
    }
    this.unplanted = new Map(languages.map((l) => [l, new Set(DEFECT_KINDS)]))
  }

  /** String number `i` (from 0), built from the phrase table. */
  phraseString(i: number): SampleString {
    const { seed } = this
    const phrase = this.order[i % this.order.length]!
    const template = PHRASES[phrase]!
    const cycle = Math.floor(i / this.order.length)
    const id = FIRST_STRING_ID + i
    const pluralSource = typeof template.source === 'string' ? undefined : template.source
    const type: SampleString['type'] = pluralSource ? 'plural' : (template.source as string).includes(', plural,') ? 'icu' : 'text'
    const str: SampleString = {
      id,
      key: cycle === 0 ? template.key : `${template.key}_${cycle}`,
      text: pluralSource ? pluralSource.other! : (template.source as string),
      ...(pluralSource ? { sourcePlurals: pluralList(pluralSource, PLURAL_CATEGORIES.en) } : {}),
      type,
      hasPlurals: pluralSource !== undefined,
      context: template.context,
      maxLength: template.maxLength ?? 0,
      fileId: FILES[template.file].id,
      labelIds: template.maxLength ? [7] : [],
      revision: 1 + (hash32(`${seed}|rev|${id}`) % 3),
      createdAt: isoAt(i),
      template,
      translations: new Map(),
    }
    for (const languageId of this.languages) {
      const defect = this.defectFor(phrase, str, languageId, cycle)
      str.translations.set(languageId, this.translation(str, languageId, defect, isoAt(i + 600)))
    }
    return str
  }

  /**
   * An extra plain string (`SeedOptions.extraTexts`), routed to the failing port: `text` is its
   * translation, and its source too unless `source` is given.
   */
  extraString(index: number, j: number, text: string, source = text): SampleString {
    const str: SampleString = {
      id: FIRST_STRING_ID + index, key: `extra_${j}`, text: source, type: 'text', hasPlurals: false, context: '', maxLength: 0, fileId: FILES[PHRASES[0]!.file].id, labelIds: [],
      revision: 1, createdAt: isoAt(index), template: PHRASES[0]!, translations: new Map(),
    }
    for (const languageId of this.languages) {
      str.translations.set(languageId, { languageId, translationId: this.nextTranslationId++, text, defect: null, expected: this.failOutput, createdAt: isoAt(index + 600) })
    }
    return str
  }

  /** The defect planted in one (string, language), if any. */
  private defectFor(phrase: number, str: SampleString, languageId: string, cycle: number): DefectKind | null {
    const { seed } = this
    const { id } = str
    const kindsKey = `${phrase}|${languageId}`
    let kinds = this.applicable.get(kindsKey)
    if (!kinds) this.applicable.set(kindsKey, (kinds = applicableDefects(str.template, languageId as TargetCode, str.type)))
    const missing = this.unplanted.get(languageId)!
    const first = cycle === 0 && this.defectRate > 0 && missing.size > 0 ? kinds.find((k) => missing.has(k)) : undefined
    let defect: DefectKind | null = null
    if (first) defect = first
    else if (hash32(`${seed}|${id}|${languageId}`) / 4294967296 < this.defectRate) defect = kinds[hash32(`${seed}|kind|${id}|${languageId}`) % kinds.length]!
    if (defect) missing.delete(defect)
    return defect
  }

  /** The translation of a phrase string: the table's correct one, with the defect applied. */
  private translation(str: SampleString, languageId: string, defect: DefectKind | null, createdAt: string): SampleTranslation {
    const correct = str.template.translations[languageId as TargetCode]
    const translation: SampleTranslation = {
      languageId,
      translationId: this.nextTranslationId++,
      text: '',
      defect,
      expected: defect ? this.failOutput : this.passOutput,
      createdAt,
    }
    if (typeof correct === 'string') {
      translation.text = defect ? applyDefect(correct, defect, str.maxLength) : correct
    } else {
      const forms = pluralList(correct, PLURAL_CATEGORIES[languageId as TargetCode])
      translation.plurals = !defect
        ? forms
        : defect === 'empty-plural-form'
          ? forms.map((f) => (f.plural === 'one' ? { plural: f.plural, text: '' } : f))
          : forms.map((f) => ({ plural: f.plural, text: applyDefect(f.text, defect, str.maxLength) }))
      translation.text = translation.plurals.find((f) => f.plural === 'other')!.text
    }
    return translation
  }
}

/** Source language record of the sample project. */
export const SOURCE_LANGUAGE = SERVICE_LANGUAGES.en!
