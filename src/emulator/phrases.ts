// The sample project's phrase table: realistic UI strings with correct human translations.
// "Correct" is meant strictly: same placeholders, tags and numbers as the source, the same ending
// punctuation (the language's own form of it: `。` / `？` in Japanese, `؟` in Arabic, a no-break
// space before `?`, `!` and `:` in French), no doubled spaces, never identical to the source, within
// maxLength; a Markdown code span, an accelerator, an escaped quote, a URL or brackets kept as in the
// source. The emulator derives every string from this table; defects are applied on top
// (sample-project.ts), never written here.

export type TargetCode = 'de' | 'fr' | 'ja' | 'ar' | 'ru'
export type PluralCategory = 'zero' | 'one' | 'two' | 'few' | 'many' | 'other'
export type PluralForms = Partial<Record<PluralCategory, string>>
export type FileKind = 'json' | 'android' | 'macosx' | 'xliff'

export interface PhraseTemplate {
  key: string
  context: string
  file: FileKind
  maxLength?: number
  /** Source text, or the source plural forms of a plural string (Android `<plurals>`). */
  source: string | PluralForms
  translations: Record<TargetCode, string | PluralForms>
}

/** Plural categories of each target language (CLDR), in the order the service lists them. */
export const PLURAL_CATEGORIES: Record<TargetCode | 'en', PluralCategory[]> = {
  en: ['one', 'other'],
  de: ['one', 'other'],
  fr: ['one', 'many', 'other'],
  ja: ['other'],
  ar: ['zero', 'one', 'two', 'few', 'many', 'other'],
  ru: ['one', 'few', 'many', 'other'],
}

/** Ending punctuation of a translation that counts as the same as the source's. */
export const PUNCTUATION_EQUIVALENTS: Record<string, string[]> = {
  '.': ['.', '。'],
  '?': ['?', '？', '؟'],
  '!': ['!', '！'],
  ':': [':', '：'],
  '…': ['…'],
}

const NB = '\u00a0' // French puts a no-break space before ? ! : ;

export const PHRASES: PhraseTemplate[] = [
  {
    key: 'common.cancel', context: 'Button that closes a dialog without saving', file: 'json', maxLength: 12,
    source: 'Cancel',
    translations: { de: 'Abbrechen', fr: 'Annuler', ja: 'キャンセル', ar: 'إلغاء', ru: 'Отмена' },
  },
  {
    key: 'common.delete', context: 'Button that deletes the selected item', file: 'json', maxLength: 12,
    source: 'Delete',
    translations: { de: 'Löschen', fr: 'Supprimer', ja: '削除', ar: 'حذف', ru: 'Удалить' },
  },
  {
    key: 'auth.sign_out', context: 'Menu item', file: 'json', maxLength: 16,
    source: 'Sign out',
    translations: { de: 'Abmelden', fr: 'Déconnexion', ja: 'ログアウト', ar: 'تسجيل الخروج', ru: 'Выйти' },
  },
  {
    key: 'nav.account_settings', context: 'Page title', file: 'json', maxLength: 32,
    source: 'Account settings',
    translations: { de: 'Kontoeinstellungen', fr: 'Paramètres du compte', ja: 'アカウント設定', ar: 'إعدادات الحساب', ru: 'Настройки аккаунта' },
  },
  {
    key: 'dashboard.title', context: 'Heading of the dashboard', file: 'json',
    source: 'Project overview',
    translations: { de: 'Projektübersicht', fr: 'Aperçu du projet', ja: 'プロジェクトの概要', ar: 'نظرة عامة على المشروع', ru: 'Обзор проекта' },
  },
  {
    key: 'greeting.welcome_back', context: 'Greeting after sign-in; name is the first name', file: 'json',
    source: 'Welcome back, {name}!',
    translations: {
      de: 'Willkommen zurück, {name}!',
      fr: `Bon retour parmi nous, {name}${NB}!`,
      ja: 'おかえりなさい、{name}さん！',
      ar: 'مرحبًا بعودتك، {name}!',
      ru: 'С возвращением, {name}!',
    },
  },
  {
    key: 'cart.items', context: 'Cart badge, ICU plural', file: 'json',
    source: '{count, plural, one {# item in your cart} other {# items in your cart}}',
    translations: {
      de: '{count, plural, one {# Artikel im Warenkorb} other {# Artikel im Warenkorb}}',
      fr: '{count, plural, one {# article dans votre panier} other {# articles dans votre panier}}',
      ja: '{count, plural, other {カート内の商品: # 点}}',
      ar: '{count, plural, zero {# منتج في سلتك} one {# منتج في سلتك} two {# منتجان في سلتك} few {# منتجات في سلتك} many {# منتجًا في سلتك} other {# منتج في سلتك}}',
      ru: '{count, plural, one {# товар в корзине} few {# товара в корзине} many {# товаров в корзине} other {# товара в корзине}}',
    },
  },
  {
    key: 'status.words', context: 'Word count, ICU plural', file: 'xliff',
    source: '{count, plural, one {# word} other {# words}}',
    translations: {
      de: '{count, plural, one {# Wort} other {# Wörter}}',
      fr: '{count, plural, one {# mot} other {# mots}}',
      ja: '{count, plural, other {# 語}}',
      ar: '{count, plural, zero {# كلمة} one {# كلمة} two {# كلمتان} few {# كلمات} many {# كلمة} other {# كلمة}}',
      ru: '{count, plural, one {# слово} few {# слова} many {# слов} other {# слова}}',
    },
  },
  {
    key: 'upload.limit', context: 'Hint under the upload area', file: 'json',
    source: 'You can upload up to 10 files at a time.',
    translations: {
      de: 'Sie können bis zu 10 Dateien gleichzeitig hochladen.',
      fr: "Vous pouvez importer jusqu'à 10 fichiers à la fois.",
      ja: '一度に最大 10 個のファイルをアップロードできます。',
      ar: 'يمكنك رفع ما يصل إلى 10 ملفات في المرة الواحدة.',
      ru: 'Можно загрузить до 10 файлов за раз.',
    },
  },
  {
    key: 'error_file_not_found', context: 'Error; %s is the file name', file: 'android',
    source: 'File %s was not found.',
    translations: {
      de: 'Datei %s wurde nicht gefunden.',
      fr: 'Le fichier %s est introuvable.',
      ja: 'ファイル %s が見つかりませんでした。',
      ar: 'لم يتم العثور على الملف %s.',
      ru: 'Файл %s не найден.',
    },
  },
  {
    key: 'profile.updated_by', context: 'Footer of a profile card', file: 'json',
    source: 'Last updated by {{name}} on {{date}}',
    translations: {
      de: 'Zuletzt aktualisiert von {{name}} am {{date}}',
      fr: 'Dernière mise à jour par {{name}} le {{date}}',
      ja: '最終更新: {{name}}（{{date}}）',
      ar: 'آخر تحديث بواسطة {{name}} في {{date}}',
      ru: 'Последнее изменение: {{name}}, {{date}}',
    },
  },
  {
    key: 'billing.trial_ends', context: 'Banner; date is already formatted', file: 'xliff',
    source: 'Your trial ends on <b>{date}</b>.',
    translations: {
      de: 'Ihre Testphase endet am <b>{date}</b>.',
      fr: 'Votre essai se termine le <b>{date}</b>.',
      ja: '無料トライアルは<b>{date}</b>に終了します。',
      ar: 'تنتهي الفترة التجريبية في <b>{date}</b>.',
      ru: 'Пробный период заканчивается <b>{date}</b>.',
    },
  },
  {
    key: 'editor.unsaved_changes', context: 'Confirmation when leaving the editor', file: 'json',
    source: 'You have unsaved changes. Leave anyway?',
    translations: {
      de: 'Sie haben ungespeicherte Änderungen. Trotzdem verlassen?',
      fr: `Modifications non enregistrées. Quitter quand même${NB}?`,
      ja: '保存されていない変更があります。このまま移動しますか？',
      ar: 'لديك تغييرات غير محفوظة. هل تريد المغادرة على أي حال؟',
      ru: 'Есть несохранённые изменения. Всё равно выйти?',
    },
  },
  {
    key: 'tasks_assigned', context: 'Notification; %1$s is a person, %2$d a number of tasks', file: 'android',
    source: '%1$s assigned you %2$d tasks',
    translations: {
      de: '%1$s hat Ihnen %2$d Aufgaben zugewiesen',
      fr: '%1$s vous a attribué %2$d tâches',
      ja: '%1$s さんから %2$d 件のタスクが割り当てられました',
      ar: 'أسند إليك %1$s عدد %2$d من المهام',
      ru: '%1$s назначает вам задачи: %2$d',
    },
  },
  {
    key: 'search.no_results', context: 'Empty state of the search page', file: 'json',
    source: 'No results found for {query}',
    translations: {
      de: 'Keine Ergebnisse für {query}',
      fr: 'Aucun résultat pour {query}',
      ja: '{query} に一致する結果はありません',
      ar: 'لا توجد نتائج لـ {query}',
      ru: 'Ничего не найдено по запросу {query}',
    },
  },
  {
    key: 'signup.terms', context: 'Under the sign-up button', file: 'xliff',
    source: 'By signing up, you agree to our <a href="/terms">Terms of Service</a>.',
    translations: {
      de: 'Mit der Registrierung stimmen Sie unseren <a href="/terms">Nutzungsbedingungen</a> zu.',
      fr: `En vous inscrivant, vous acceptez nos <a href="/terms">Conditions d'utilisation</a>.`,
      ja: '登録すると、<a href="/terms">利用規約</a>に同意したことになります。',
      ar: 'بالتسجيل، فإنك توافق على <a href="/terms">شروط الخدمة</a>.',
      ru: 'Регистрируясь, вы принимаете <a href="/terms">Условия использования</a>.',
    },
  },
  {
    key: 'new_messages', context: 'Inbox badge; Android plurals', file: 'android',
    source: { one: 'You have %d new message', other: 'You have %d new messages' },
    translations: {
      de: { one: 'Sie haben %d neue Nachricht', other: 'Sie haben %d neue Nachrichten' },
      fr: { one: 'Vous avez %d nouveau message', many: 'Vous avez %d nouveaux messages', other: 'Vous avez %d nouveaux messages' },
      ja: { other: '新着メッセージが %d 件あります' },
      ar: {
        zero: 'لديك %d رسالة جديدة', one: 'لديك %d رسالة جديدة', two: 'لديك %d رسالتان جديدتان',
        few: 'لديك %d رسائل جديدة', many: 'لديك %d رسالة جديدة', other: 'لديك %d رسالة جديدة',
      },
      ru: { one: 'У вас %d новое сообщение', few: 'У вас %d новых сообщения', many: 'У вас %d новых сообщений', other: 'У вас %d нового сообщения' },
    },
  },
  {
    key: 'files_selected', context: 'Selection bar; Android plurals', file: 'android',
    source: { one: '%d file selected', other: '%d files selected' },
    translations: {
      de: { one: '%d Datei ausgewählt', other: '%d Dateien ausgewählt' },
      fr: { one: '%d fichier sélectionné', many: '%d fichiers sélectionnés', other: '%d fichiers sélectionnés' },
      ja: { other: '%d 個のファイルを選択中' },
      ar: {
        zero: '%d ملف محدد', one: '%d ملف محدد', two: '%d ملفان محددان',
        few: '%d ملفات محددة', many: '%d ملفًا محددًا', other: '%d ملف محدد',
      },
      ru: { one: 'Выбран %d файл', few: 'Выбрано %d файла', many: 'Выбрано %d файлов', other: 'Выбрано %d файла' },
    },
  },
  {
    key: 'upload.in_progress', context: 'Progress line while a file uploads', file: 'json',
    source: 'Uploading {fileName}…',
    translations: {
      de: '{fileName} wird hochgeladen…',
      fr: 'Importation de {fileName}…',
      ja: '{fileName} をアップロードしています…',
      ar: 'جارٍ رفع {fileName}…',
      ru: 'Загрузка {fileName}…',
    },
  },
  {
    key: 'password.min_length', context: 'Validation message', file: 'xliff',
    source: 'Password must be at least 8 characters long.',
    translations: {
      de: 'Das Passwort muss mindestens 8 Zeichen lang sein.',
      fr: 'Le mot de passe doit contenir au moins 8 caractères.',
      ja: 'パスワードは 8 文字以上で入力してください。',
      ar: 'يجب أن تتكون كلمة المرور من 8 أحرف على الأقل.',
      ru: 'Пароль должен содержать не менее 8 символов.',
    },
  },
  {
    key: 'onboarding.invite_body', context: 'Long help text of the invite dialog', file: 'xliff',
    source: 'Invite your teammates to collaborate on translations in real time. They will receive an email with a link to join this project, and you can change their roles at any time from the Members page.',
    translations: {
      de: 'Laden Sie Ihre Teammitglieder ein, um gemeinsam in Echtzeit an Übersetzungen zu arbeiten. Sie erhalten eine E-Mail mit einem Link zum Beitritt zu diesem Projekt, und Sie können ihre Rollen jederzeit auf der Seite „Mitglieder“ ändern.',
      fr: 'Invitez vos coéquipiers à collaborer sur les traductions en temps réel. Ils recevront un e-mail contenant un lien pour rejoindre ce projet, et vous pourrez modifier leurs rôles à tout moment depuis la page Membres.',
      ja: 'チームメンバーを招待して、リアルタイムで翻訳に共同で取り組みましょう。メンバーにはこのプロジェクトに参加するためのリンクが記載されたメールが届きます。役割は「メンバー」ページからいつでも変更できます。',
      ar: 'ادعُ زملاءك في الفريق للتعاون على الترجمات في الوقت الفعلي. سيتلقون رسالة بريد إلكتروني تتضمن رابطًا للانضمام إلى هذا المشروع، ويمكنك تغيير أدوارهم في أي وقت من صفحة الأعضاء.',
      ru: 'Пригласите коллег к совместной работе над переводами в реальном времени. Они получат письмо со ссылкой для присоединения к проекту, а их роли можно изменить в любой момент на странице «Участники».',
    },
  },
  {
    key: 'export.finished', context: 'Toast after an export; count is a number', file: 'xliff',
    source: 'Export finished: <b>{count}</b> strings exported.',
    translations: {
      de: 'Export abgeschlossen: <b>{count}</b> Strings exportiert.',
      fr: `Export terminé${NB}: <b>{count}</b> chaînes exportées.`,
      ja: 'エクスポート完了: <b>{count}</b> 件の文字列をエクスポートしました。',
      ar: 'اكتمل التصدير: تم تصدير <b>{count}</b> من السلاسل النصية.',
      ru: 'Экспорт завершён, экспортировано строк: <b>{count}</b>.',
    },
  },
  {
    key: 'time.updated_ago', context: 'Relative time under a card', file: 'json', maxLength: 40,
    source: 'Updated {minutes} min ago',
    translations: {
      de: 'Vor {minutes} Min. aktualisiert',
      fr: 'Mis à jour il y a {minutes} min',
      ja: '{minutes} 分前に更新',
      ar: 'تم التحديث قبل {minutes} دقيقة',
      ru: 'Обновлено {minutes} мин. назад',
    },
  },
  {
    key: 'storage.usage', context: 'Storage meter', file: 'json', maxLength: 48,
    source: '{used} GB of {total} GB used',
    translations: {
      de: '{used} GB von {total} GB belegt',
      fr: '{used} Go utilisés sur {total} Go',
      ja: '{total} GB 中 {used} GB 使用中',
      ar: 'مستخدم {used} GB من {total} GB',
      ru: 'Использовано {used} ГБ из {total} ГБ',
    },
  },
  {
    key: 'presence_editing', context: '%s is a person, %d the number of other people', file: 'android',
    source: '<b>%s</b> and %d others are editing this file',
    translations: {
      de: '<b>%s</b> und %d weitere Personen bearbeiten diese Datei',
      fr: '<b>%s</b> et %d autres personnes modifient ce fichier',
      ja: '<b>%s</b> さんほか %d 人がこのファイルを編集中です',
      ar: '<b>%s</b> و%d آخرون يحررون هذا الملف',
      ru: '<b>%s</b> и ещё %d чел. редактируют этот файл',
    },
  },
  {
    key: 'network.retrying', context: 'Banner while offline', file: 'macosx',
    source: 'Connection lost. Retrying in {seconds} seconds…',
    translations: {
      de: 'Verbindung unterbrochen. Neuer Versuch in {seconds} Sekunden…',
      fr: 'Connexion perdue. Nouvelle tentative dans {seconds} secondes…',
      ja: '接続が切断されました。{seconds} 秒後に再試行します…',
      ar: 'انقطع الاتصال. إعادة المحاولة خلال {seconds} ثانية…',
      ru: 'Соединение потеряно. Повторная попытка через {seconds} с…',
    },
  },
  {
    key: 'project.delete_confirm', context: 'Confirmation dialog', file: 'macosx',
    source: 'Delete this project? This action cannot be undone.',
    translations: {
      de: 'Dieses Projekt löschen? Diese Aktion kann nicht rückgängig gemacht werden.',
      fr: `Supprimer ce projet${NB}? Cette action est irréversible.`,
      ja: 'このプロジェクトを削除しますか？この操作は元に戻せません。',
      ar: 'هل تريد حذف هذا المشروع؟ لا يمكن التراجع عن هذا الإجراء.',
      ru: 'Удалить этот проект? Это действие нельзя отменить.',
    },
  },
  {
    key: 'editor.shortcut_save', context: 'Tooltip of the save button', file: 'xliff',
    source: 'Press <kbd>Ctrl</kbd> + <kbd>S</kbd> to save',
    translations: {
      de: 'Drücken Sie <kbd>Strg</kbd> + <kbd>S</kbd> zum Speichern',
      fr: 'Appuyez sur <kbd>Ctrl</kbd> + <kbd>S</kbd> pour enregistrer',
      ja: '<kbd>Ctrl</kbd> + <kbd>S</kbd> キーで保存',
      ar: 'اضغط على <kbd>Ctrl</kbd> + <kbd>S</kbd> للحفظ',
      ru: 'Нажмите <kbd>Ctrl</kbd> + <kbd>S</kbd>, чтобы сохранить',
    },
  },
  {
    key: 'invoice.due', context: 'First %s is the invoice number, second a date', file: 'macosx',
    source: 'Invoice #%s is due on %s.',
    translations: {
      de: 'Rechnung #%s ist am %s fällig.',
      fr: 'Facture #%s à payer avant le %s.',
      ja: '請求書 #%s の支払期日は %s です。',
      ar: 'تستحق الفاتورة #%s في %s.',
      ru: 'Счёт #%s нужно оплатить до %s.',
    },
  },
  {
    key: 'wizard.step', context: 'Progress of the set-up wizard', file: 'json', maxLength: 40,
    source: 'Step {current} of {total}',
    translations: {
      de: 'Schritt {current} von {total}',
      fr: 'Étape {current} sur {total}',
      ja: 'ステップ {current}/{total}',
      ar: 'الخطوة {current} من {total}',
      ru: 'Шаг {current} из {total}',
    },
  },
  {
    key: 'api.rate_limit', context: 'Developer settings', file: 'xliff',
    source: 'Up to 20 requests per second are allowed.',
    translations: {
      de: 'Es sind bis zu 20 Anfragen pro Sekunde erlaubt.',
      fr: "Jusqu'à 20 requêtes par seconde sont autorisées.",
      ja: '毎秒最大 20 件のリクエストを送信できます。',
      ar: 'يُسمح بما يصل إلى 20 طلبًا في الثانية.',
      ru: 'Допускается до 20 запросов в секунду.',
    },
  },
  {
    key: 'email.verification_sent', context: 'After sign-up', file: 'json',
    source: 'We sent a verification link to <b>{{email}}</b>.',
    translations: {
      de: 'Wir haben einen Bestätigungslink an <b>{{email}}</b> gesendet.',
      fr: 'Nous avons envoyé un lien de vérification à <b>{{email}}</b>.',
      ja: '<b>{{email}}</b> に確認リンクを送信しました。',
      ar: 'أرسلنا رابط التحقق إلى <b>{{email}}</b>.',
      ru: 'Мы отправили ссылку для подтверждения на <b>{{email}}</b>.',
    },
  },
  {
    key: 'cli.install_hint', context: 'Help center; Markdown with an inline code span', file: 'xliff',
    source: 'Run `npm install` to set up the project.',
    translations: {
      de: 'Führen Sie `npm install` aus, um das Projekt einzurichten.',
      fr: 'Exécutez `npm install` pour configurer le projet.',
      ja: '`npm install` を実行してプロジェクトをセットアップします。',
      ar: 'شغّل `npm install` لإعداد المشروع.',
      ru: 'Выполните `npm install`, чтобы настроить проект.',
    },
  },
  {
    key: 'menu.open_file', context: 'Menu item; & marks the accelerator key', file: 'macosx',
    source: '&Open a file',
    translations: { de: 'Datei ö&ffnen', fr: '&Ouvrir le fichier', ja: 'ファイルを開く(&O)', ar: '&فتح الملف', ru: '&Открыть файл' },
  },
  {
    key: 'save_hint', context: 'Android string with escaped quotes around the button name', file: 'android',
    source: 'Tap \\"Save\\" to keep the changes you have made.',
    translations: {
      de: 'Tippen Sie auf \\"Speichern\\", um Ihre Änderungen zu behalten.',
      fr: 'Appuyez sur \\"Enregistrer\\" pour conserver vos modifications.',
      ja: '\\"保存\\" をタップして変更を保持します。',
      ar: 'اضغط على \\"حفظ\\" للاحتفاظ بتغييراتك.',
      ru: 'Нажмите \\"Сохранить\\", чтобы не потерять изменения.',
    },
  },
  {
    key: 'help.guide_link', context: 'Help center; the URL stays as it is', file: 'xliff',
    source: 'Read the guide at https://help.acme.test/start.',
    translations: {
      de: 'Lesen Sie die Anleitung unter https://help.acme.test/start.',
      fr: 'Consultez le guide sur https://help.acme.test/start.',
      ja: 'ガイドは https://help.acme.test/start をご覧ください。',
      ar: 'اقرأ الدليل على https://help.acme.test/start.',
      ru: 'Руководство: https://help.acme.test/start.',
    },
  },
  {
    key: 'settings.export_advanced', context: 'Section title', file: 'json',
    source: 'Export settings (advanced)',
    translations: {
      de: 'Exporteinstellungen (erweitert)',
      fr: 'Paramètres d’export (avancés)',
      ja: 'エクスポート設定（詳細）',
      ar: 'إعدادات التصدير (متقدمة)',
      ru: 'Настройки экспорта (расширенные)',
    },
  },
  {
    key: 'image.width', context: 'Image size field; px is the unit', file: 'json',
    source: 'Width: {width} px',
    translations: { de: 'Breite: {width} px', fr: `Largeur${NB}: {width} px`, ja: '幅: {width} px', ar: 'العرض: {width} px', ru: 'Ширина: {width} px' },
  },
]
