import { PluginTester } from '../../src/engine/plugin-tester.js'
import placeholders from './index.js'

new PluginTester().run(placeholders, {
  valid: [
    { source: 'Delete %s?', translation: 'Supprimer %s ?' },
    { source: 'Hello {name}, you have {count} messages', translation: '{count}件のメッセージがあります、{name}さん', targetLanguage: 'ja' },
    { name: 'positional printf may reorder', source: '%1$s uploaded %2$d files', translation: '%2$d ملفات رفعها %1$s', targetLanguage: 'ar' },
    { name: 'plain printf rewritten with positions', source: '%s uploaded %d files', translation: '%2$d файлов загрузил %1$s', targetLanguage: 'ru' },
    { name: '%% is a literal percent sign', source: '%d%% done', translation: '%d %% terminé' },
    { name: '50% followed by a space is not a placeholder', source: 'Save 50% today', translation: 'Économisez 50 % aujourd’hui' },
    { name: 'ICU: top-level arguments only', source: '{count, plural, one {# item} other {# items}}', translation: '{count, plural, one {# элемент} few {# элемента} many {# элементов} other {# элемента}}', targetLanguage: 'ru' },
    { name: 'braces around CJK text are not placeholders', source: 'Open {file}', translation: '打开 {file}（{文件}）', targetLanguage: 'zh-CN' },
    { source: 'Welcome, {{user}}!', translation: 'स्वागत है, {{ user }}!', targetLanguage: 'hi' },
    { source: 'Total: ${amount}', translation: 'Σύνολο: ${amount}', targetLanguage: 'el' },
    { source: 'Hi %{name}, see $t(common.more)', translation: 'שלום %{name}, ראה $t(common.more)', targetLanguage: 'he' },
    { source: 'Path: %APPDATA%', translation: 'เส้นทาง: %APPDATA%', targetLanguage: 'th' },
    { name: 'Turkish percent before the number', source: 'Save 50% now', translation: 'Şimdi %50 tasarruf edin', targetLanguage: 'tr' },
    { name: ':name is off by default', source: 'Hello :name', translation: 'Bonjour' },
    { source: 'Value %.2f and %@', translation: 'Wert %.2f und %@', targetLanguage: 'de' },
    { name: 'custom pattern', source: 'Hi [[user]]', translation: 'Salut [[user]]', options: { custom: ['\\[\\[\\w+\\]\\]'] } },
  ],
  invalid: [
    { source: 'Delete %s?', translation: 'Supprimer ?', findings: [{ message: 'Missing placeholder %s', span: { start: 7, end: 9, in: 'source' } }] },
    { source: 'Hello {name}', translation: 'Привет, {имя}', targetLanguage: 'ru', findings: [{ message: 'Missing placeholder {name}' }] },
    { source: 'Hello {name}', translation: 'こんにちは {user}', targetLanguage: 'ja', findings: [{ message: 'Missing placeholder {name}' }, { message: 'Placeholder {user} is not in the source', span: { start: 6, end: 12, in: 'translation' } }] },
    { name: 'plain printf swapped', source: '%s has %d files', translation: '%d ملفات لدى %s', targetLanguage: 'ar', findings: [{ message: 'changed order' }] },
    { name: 'positional printf type changed', source: '%1$s has %2$d files', translation: '%2$s ملفات لدى %1$s', targetLanguage: 'ar', findings: [{ message: 'Missing placeholder %2$d', span: { start: 9, end: 13, in: 'source' } }, { message: 'Placeholder %2$s is not in the source', span: { start: 0, end: 4, in: 'translation' } }] },
    { source: 'Welcome, {{user}}!', translation: 'स्वागत है, {{username}}!', targetLanguage: 'hi', findings: [{ message: 'Missing placeholder {{user}}', span: { start: 9, end: 17, in: 'source' } }, { message: 'Placeholder {{username}} is not in the source', span: { start: 11, end: 23, in: 'translation' } }] },
    { source: 'Total: ${amount}', translation: 'Σύνολο: $amount', targetLanguage: 'el', findings: [{ message: 'Missing placeholder ${amount}' }] },
    { name: 'duplicated placeholder', source: 'Hi %{name}', translation: 'שלום %{name} %{name}', targetLanguage: 'he', findings: [{ message: 'Placeholder %{name} is not in the source' }] },
    { source: 'Path: %APPDATA%', translation: 'เส้นทาง: APPDATA', targetLanguage: 'th', findings: [{ message: 'Missing placeholder %APPDATA%', span: { start: 6, end: 15, in: 'source' } }] },
    { name: 'ICU argument renamed', source: '{count, plural, one {# item} other {# items}}', translation: '{n, plural, other {# 项}}', targetLanguage: 'zh-CN', findings: [{ message: 'Missing placeholder {count, …}' }, { message: '{n, …}' }] },
    { name: ':name when enabled', source: 'Hello :name', translation: 'Bonjour', options: { formats: ['colon'] }, findings: [{ message: 'Missing placeholder :name' }] },
    { name: 'Qt placeholders when enabled', source: 'Copy %1 to %2', translation: 'Kopiere %1 nach %3', targetLanguage: 'de', options: { formats: ['qt'] }, findings: [{ message: 'Missing placeholder %2' }, { message: 'Placeholder %3 is not in the source' }] },
    { source: 'Value %.2f', translation: 'Wert %.1f', targetLanguage: 'de', findings: [{ message: 'Missing placeholder %.2f', span: { start: 6, end: 10, in: 'source' } }, { message: 'Placeholder %.1f is not in the source', span: { start: 5, end: 9, in: 'translation' } }] },
    { source: 'See $t(common.more)', translation: 'Voir $t(common.less)', findings: [{ message: 'Missing placeholder $t(common.more)', span: { start: 4, end: 19, in: 'source' } }, { message: 'Placeholder $t(common.less) is not in the source', span: { start: 5, end: 20, in: 'translation' } }] },
  ],
})
