// The package's public API, for plugin authors: `import { definePlugin, PluginTester } from 'switchyard'`.
export { defineMessages, definePlugin, SEVERITIES } from './engine/types.js'
export type {
  Finding, FindingExtra, FindingInput, Item, Language, MessageSpec, Messages, Need, OptionsOf, PluginCache, PluginContext,
  PluginDefinition, PluginEvent, PluginInstance, PluginMetrics, PluralForm, Report, Severity, Span,
} from './engine/types.js'
export { PluginTester, runPluginCase, testContext, testItem } from './engine/plugin-tester.js'
export type { ExpectedFinding, InvalidPluginTestCase, PluginTestCase } from './engine/plugin-tester.js'
export { languageFromCode, localeOf } from './engine/languages.js'
export { parseRetryAfter } from './util/retry-after.js'
export { instantiatePlugin, resolvePluginOptions, PluginOptionsError } from './engine/instantiate-plugin.js'
