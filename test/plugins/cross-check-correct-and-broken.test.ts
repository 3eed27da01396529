// Cross-check of the checks on correct and broken translations: correct translations in many
// scripts raise no finding in ANY of these checks (a false alarm anywhere fails the string), and
// typical broken ones are caught by the check meant for them, with the codes listed, and by no other.
import { describe, expect, it } from 'vitest'
import { runPluginCase } from '../../src/engine/plugin-tester.js'
import placeholders from '../../plugins/placeholders/index.js'
import icu from '../../plugins/icu/index.js'
import tags from '../../plugins/tags/index.js'
import length from '../../plugins/length/index.js'
import whitespace from '../../plugins/whitespace/index.js'
import punctuation from '../../plugins/punctuation/index.js'
import numbers from '../../plugins/numbers/index.js'
import urls from '../../plugins/urls/index.js'
import brackets from '../../plugins/brackets/index.js'

const plugins = [placeholders, icu, tags, length, whitespace, punctuation, numbers, urls, brackets]
const good: [string, string, string][] = [
  ['fr', 'You have %d new messages.', 'Vous avez %d nouveaux messages.'],
  ['fr', 'Are you sure you want to delete "%s"?', 'Voulez-vous vraiment supprimer «\u00a0%s\u00a0»\u00a0?'],
  ['fr-CA', 'Are you sure?', 'Êtes-vous certain?'],
  ['de', 'Welcome back, {name}!', 'Willkommen zurück, {name}!'],
  ['de', 'Price: $1,299.99', 'Preis: 1.299,99 $'],
  ['es', 'Do you want to save changes?', '¿Desea guardar los cambios?'],
  ['es', 'Great job!', '¡Buen trabajo!'],
  ['ja', 'Saved successfully.', '正常に保存されました。'],
  ['ja', 'Delete {count} files?', '{count} 件のファイルを削除しますか？'],
  ['zh-CN', 'Error: %s', '错误：%s'],
  ['zh-TW', 'Click <b>here</b> to continue.', '按一下<b>這裡</b>繼續。'],
  ['ko', 'Do you want to log out?', '로그아웃하시겠습니까?'],
  ['ar', 'You have 3 new notifications.', 'لديك ٣ إشعارات جديدة.'],
  ['ar', 'Delete this item?', 'هل تريد حذف هذا العنصر؟'],
  ['he', 'Version 2.0 is available.', 'גרסה 2.0 זמינה.'],
  ['fa', 'Settings', 'تنظیمات'],
  ['ru', '1,024 MB free', 'Свободно 1\u00a0024\u00a0МБ'],
  ['uk', 'Loading…', 'Завантаження...'],
  ['el', 'Do you want to continue?', 'Θέλετε να συνεχίσετε;'],
  ['th', 'Your password has been changed.', 'รหัสผ่านของคุณถูกเปลี่ยนแล้ว'],
  ['hi', 'Your file has been uploaded.', 'आपकी फ़ाइल अपलोड हो गई है।'],
  ['hi', 'Upload 5 files', '5 फ़ाइलें अपलोड करें'],
  ['pl', '{count, plural, one {# file} other {# files}}', '{count, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}'],
  ['tr', '50% off', '%50 indirim'],
  ['fr', 'Save 50% now!', 'Économisez 50\u00a0% maintenant\u00a0!'],
  ['pt-BR', 'Learn more at https://example.com/help.', 'Saiba mais em https://example.com/help.'],
  ['vi', 'Open settings', 'Mở cài đặt'],
  ['sv', 'Step 1 of 3', 'Steg 1 av 3'],
  ['it', "Don't show again", 'Non mostrare più'],
  ['cs', 'Saved in Prague', 'Uloženo v\u00a0Praze'],
  ['hy', 'Save', 'Պահպանել'],
  ['my', 'Saved.', 'သိမ်းဆည်းပြီးပါပြီ။'],
  ['km', 'Saved.', 'បានរក្សាទុក។'],
  ['bn', 'Page 3', 'পৃষ্ঠা ৩'],
  ['de', 'Press <kbd>Ctrl</kbd> + <kbd>S</kbd> to save.', 'Drücken Sie <kbd>Strg</kbd> + <kbd>S</kbd>, um zu speichern.'],
  ['ja', 'Upload failed (error 404).', 'アップロードに失敗しました（エラー 404）。'],
  ['fr', 'Time left: 5 min', 'Temps restant\u202f: 5\u00a0min'],
  ['nl', 'Hello, %1$s! You have %2$d messages.', 'Hallo %1$s! Je hebt %2$d berichten.'],
  ['de', 'Hello {user}. Use {{app}} at ${url}.', 'Hallo {user}. Nutze {{app}} unter ${url}.'],
  ['fr', 'Email us at help@example.com.', 'Écrivez-nous à help@example.com.'],
  ['zh-CN', 'Today, 10:30 AM', '今天上午 10:30'],
  ['ja', 'Version 1.2.3', 'バージョン 1.2.3'],
  ['en-GB', 'Color', 'Colour'],
  ['de', 'A-Z', 'A–Z'],
  ['fr', 'Next »', 'Suivant »'],
  ['ru', '“Quoted” text', '«Цитируемый» текст'],
  ['ar', 'Delete %1$s from %2$s?', 'هل تريد حذف %1$s من %2$s؟'],
  ['ja', 'Delete "%s"?', '「%s」を削除しますか？'],
  ['ja', "Note: this can't be undone.", '注意：この操作は元に戻せません。'],
  ['de', 'e.g. a file', 'z.\u00a0B. eine Datei'],
  ['ar', 'Download (2.5 MB)', 'تنزيل (٢٫٥ ميغابايت)'],
  ['he', 'Download (2.5 MB)', 'הורדה (\u200e2.5 MB\u200e)'],
  ['ru', 'Copyright © 2024 Example Inc.', '© 2024 Example Inc. Все права защищены.'],
  ['ar', '2 files', 'ملفان'],
  ['zh-CN', '3 days ago', '三天前'],
  ['fr', '24/7 support', 'Assistance 24 h/24, 7 j/7'],
  ['fr', 'Username:', 'Nom d’utilisateur\u00a0:'],
  ['fr', "Don't forget!", 'N’oubliez pas\u202f!'],
  ['es', 'Delete "%s"?', '¿Eliminar «%s»?'],
  ['de', '4K video', '4K-Video'],
  ['ja', 'Hello!', 'こんにちは！'],
  ['ko', 'Saved.', '저장되었습니다.'],
  ['vi', 'Delete?', 'Xóa?'],
  ['id', 'Loading...', 'Memuat...'],
  ['fr', 'Total: %d%%', 'Total\u00a0: %d\u00a0%%'],
  ['pt', '{count, plural, one {# item} other {# items}}', '{count, plural, one {# item} other {# itens}}'],
  ['fr', '{count, plural, one {# item} other {# items}}', '{count, plural, one {# élément} other {# éléments}}'],
  ['uk', 'Sign in with Google', 'Увійти через Google'],
  ['zh-CN', 'Use <code>npm install</code> to install.', '使用 <code>npm install</code> 进行安装。'],
  ['ja', 'Name: ', '名前：'],
  ['fr', 'Name (required)', 'Nom (obligatoire)'],
  ['fr', 'Lines:\n- one\n- two', 'Lignes\u00a0:\n- un\n- deux'],
  ['th', 'Are you sure you want to sign out?', 'คุณแน่ใจหรือไม่ว่าต้องการออกจากระบบ'],
  ['ta', 'Saved.', 'சேமிக்கப்பட்டது.'],
  ['ka', 'Save changes?', 'შევინახო ცვლილებები?'],
  ['am', 'Saved.', 'ተቀምጧል።'],
  ['ur', 'Saved.', 'محفوظ ہو گیا۔'],
  ['el', 'Hello; world', 'Γεια· κόσμε'],
]
describe('correct translations pass every check', () => {
for (const [lang, source, translation] of good) {
  it(`${lang}: ${source}`, async () => {
    const all: string[] = []
    for (const p of plugins) {
      const f = await runPluginCase(p as never, { source, translation, targetLanguage: lang })
      for (const x of f) all.push(`${p.name}/${x.severity}: ${x.message}`)
    }
    if (all.length) throw new Error(all.join('\n'))
  })
}
})
// Each defect, and exactly what catches it: the check meant for it and no other (a defect caught
// only by the wrong check, or by none, fails).
/** Each defect and the findings it raises, as `check/code`, in order. */
const bad: Array<[lang: string, source: string, translation: string, caughtBy: string[]]> = [
  ['fr', 'Delete %s?', 'Supprimer ?', ['placeholders/missing-placeholder']],
  ['de', 'Hello {name}!', 'Hallo {Name}!', ['placeholders/missing-placeholder', 'placeholders/extra-placeholder']],
  ['ja', 'Click <b>here</b>.', '<b>ここ</b をクリック。', ['tags/unclosed-tag', 'tags/missing-tag']],
  ['ar', 'You have 3 new notifications.', 'لديك ٤ إشعارات جديدة.', ['numbers/missing-number', 'numbers/extra-number']],
  ['es', 'Do you want to save?', 'Desea guardar?', ['punctuation/spanish-question-mark']],
  ['ru', 'Line 1\nLine 2', 'Строка 1 Строка 2', ['whitespace/line-breaks']],
  ['zh-CN', 'Settings (advanced)', '设置（高级', ['brackets/unclosed-bracket']],
  ['he', 'Visit https://example.com', 'בקרו ב-https://example.org', ['urls/changed-url']],
  ['el', 'Are you sure?', 'Είστε σίγουροι.', ['punctuation/end-punctuation']],
  ['hi', 'Upload 15 files', 'फ़ाइलें अपलोड करें', ['numbers/missing-number']],
  ['th', 'Hello world', 'สวัสดี  ชาวโลก', ['whitespace/doubled-space']],
  ['ru', '{n, plural, one {# file} other {# files}}', '{n, plural, one {# файл} other {# файлов}}', ['icu/missing-plural-categories']],
  ['de', 'Save', '  Speichern', ['whitespace/leading-whitespace']],
  ['fr', 'Open the file', 'Ouvrir\u200b le fichier', ['whitespace/invisible-character']],
  ['ko', 'Hello %1$s, you have %2$d messages', '%1$s님, 메시지가 %1$d개 있습니다', ['placeholders/missing-placeholder', 'placeholders/extra-placeholder']],
]
describe('broken translations are caught, by the check meant for them', () => {
for (const [lang, source, translation, caughtBy] of bad) {
  it(`${lang}: ${source} -> ${caughtBy.map((c) => c.split('/')[0]).filter((c, i, a) => a.indexOf(c) === i).join(', ')}`, async () => {
    const all: string[] = []
    for (const p of plugins) {
      const f = await runPluginCase(p as never, { source, translation, targetLanguage: lang })
      for (const x of f) all.push(`${p.name}/${x.code}`)
    }
    expect(all).toEqual(caughtBy)
  })
}
})
