// A language record as the service sends it (section 2.6): in events, jobs and the plugin API.

export interface Language {
  id: string
  name?: string
  editorCode?: string
  twoLettersCode?: string
  threeLettersCode?: string
  locale?: string
  androidCode?: string
  osxCode?: string
  osxLocale?: string
  textDirection?: string
  dialectOf?: string | null
}
