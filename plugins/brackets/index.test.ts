import { PluginTester } from '../../src/engine/plugin-tester.js'
import brackets from './index.js'

new PluginTester().run(brackets, {
  valid: [
    { source: 'Settings (advanced)', translation: 'Paramètres (avancés)' },
    { name: 'full-width parentheses count as ASCII ones', source: 'Settings (advanced)', translation: '设置（高级）', targetLanguage: 'zh-CN' },
    { name: '【】 for [ ]', source: '[Beta] New editor', translation: '【ベータ】新しいエディター', targetLanguage: 'ja' },
    { name: 'Japanese corner quotes for English quotes', source: 'Click "Save"', translation: '「保存」をクリック', targetLanguage: 'ja' },
    { name: 'Chinese title marks', source: 'Read the User Guide', translation: '阅读《用户指南》', targetLanguage: 'zh-CN' },
    { name: 'RTL text keeps logical parentheses', source: 'Files (3)', translation: 'الملفات (3)', targetLanguage: 'ar' },
    { source: 'Files (3)', translation: 'קבצים (3)', targetLanguage: 'he' },
    { name: 'guillemets are quotes, not brackets', source: 'Press "OK"', translation: 'Нажмите «ОК»', targetLanguage: 'ru' },
    { name: 'placeholder braces are ignored', source: 'Hello {name} [{count}]', translation: 'नमस्ते {name} [{count}]', targetLanguage: 'hi' },
    { name: 'ICU braces are ignored', source: '{n, plural, one {# file (local)} other {# files (local)}}', translation: '{n, plural, other {# αρχεία}}', targetLanguage: 'el' },
    { name: 'unbalanced list markers as in the source', source: '1) Open 2) Save', translation: '1) เปิด 2) บันทึก', targetLanguage: 'th' },
    { name: 'emoticons', source: 'Thanks :)', translation: 'Danke :)', targetLanguage: 'de' },
  ],
  invalid: [
    { name: "an added explanatory pair is a warning, not an error", source: "Last updated by {{name}} on {{date}}", translation: "最終更新: {{name}}（{{date}}）", targetLanguage: "ja", findings: [{ severity: "warning", message: "0 pairs of parentheses" }] },
    { source: 'Settings (advanced)', translation: 'Paramètres (avancés', findings: [{ message: '“(” is not closed', span: { start: 11, end: 12, in: 'translation' } }] },
    { source: 'Settings (advanced)', translation: '设置（高级', targetLanguage: 'zh-CN', findings: [{ message: '“（” is not closed', span: { start: 2, end: 3, in: 'translation' } }] },
    { source: 'Settings (advanced)', translation: 'Настройки', targetLanguage: 'ru', findings: [{ message: 'The source has 1 pair of parentheses, the translation 0' }] },
    { source: '[Beta] New editor', translation: 'Νέος επεξεργαστής', targetLanguage: 'el', findings: [{ message: 'square brackets' }] },
    { source: 'Files (3)', translation: 'الملفات )3(', targetLanguage: 'ar', findings: [{ message: 'Closing “)” has no opening bracket' }, { message: '“(” is not closed' }] },
    { source: 'See (the [list])', translation: 'Siehe (die [Liste)]', targetLanguage: 'de', findings: [{ message: '“[” is not closed before “)”', span: { start: 11, end: 12, in: 'translation' } }, { message: 'Closing “]” has no opening bracket', span: { start: 18, end: 19, in: 'translation' } }] },
    { source: 'Read the guide', translation: '阅读《用户指南', targetLanguage: 'zh-CN', findings: [{ message: '“《” is not closed' }] },
    { source: 'Total', translation: 'कुल (सभी)', targetLanguage: 'hi', findings: [{ message: 'The source has 0 pairs of parentheses, the translation 1' }] },
    { source: 'Open [file]', translation: 'เปิด [ไฟล์]]', targetLanguage: 'th', findings: [{ message: 'Closing “]” has no opening bracket', span: { start: 11, end: 12, in: 'translation' } }] },
    { source: 'Value {x}', translation: 'Wert {x} }', targetLanguage: 'de', findings: [{ message: 'Closing “}” has no opening bracket', span: { start: 9, end: 10, in: 'translation' } }] },
  ],
})
