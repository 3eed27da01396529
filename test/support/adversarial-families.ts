// Texts built to make a check slow: many copies of one token (or of an opening run then a closing
// run), the shapes that make a stack search, a per-match slice or a retried regex quadratic.
// Each family is a function of n, so a test can compare the work at n and at 2n.

export interface Family {
  name: string
  text(n: number): string
}

const repeat = (token: string): Family => ({ name: JSON.stringify(token), text: (n) => token.repeat(n) })
const nested = (open: string, close: string): Family => ({ name: `${JSON.stringify(open)}×n ${JSON.stringify(close)}×n`, text: (n) => open.repeat(n) + close.repeat(n) })
const long = (prefix: string, fill: string, suffix = ''): Family => ({ name: `${JSON.stringify(prefix)}+${JSON.stringify(fill)}×n${suffix ? `+${JSON.stringify(suffix)}` : ''}`, text: (n) => prefix + fill.repeat(n) + suffix })

export const FAMILIES: Family[] = [
  ...['(', ')', '()', '(（', '[', '【', '{', '}', '{0}', '{{', '{{a}}', '${', '%(', '%(a)s', '$t(', '%', '%s', '%d%', '%1$s', '%a%', '%0', ':a', ':)',
    '<', '>', '<b>', '</b>', '<b>x</b>', '<br/>', '<!--', '<b a="', '&', '&amp;', '&#', '&F', '_', 'a_', '_a ',
    '#a# ', 'word ', 'a ', 'die ', ', die die ', 'aa', 'a-', 'a.', 'a@', '@a', 'a@b.', 'a=', 'x=y ',
    'http://a.b/', 'http://a.b/)', 'www.', 'http://', 'mailto:', 'a@b.cd ',
    '1', '1 ', '1,', '1.', '0', '1 000 ', '١', ' ', '  ', 'a  ', '\n', '\\n', '\t', '\r\n', '\u00a0', 'ab\u00a0', '\u202f', '\u200b', '\u3000', '\u200f', '\u0001',
    "'", '"', '\\', '\\"', "\\'", '\\u0041', '\\x41', '\\\\', 'aα', 'ё', '.', '!', '?', '…', '。', ' .', ' ?', 'a :', '漢', 'ไทย ',
  ].map(repeat),
  nested('(', ')'),
  nested('[', ']'),
  nested('{', '}'),
  nested('<b>', '</b>'),
  nested('<b>', '</i>'),
  nested('(', ']'),
  nested('{a, choice, 0#', '|1<b}'),
  repeat('{a, spellout} '),
  repeat('[a_'),
  long('http://a.b/', ')'),
  long('http://a.b/', '.'),
  long('a', 'a', '@'),
  long('%', '0'),
  long('%(a)', '0'),
  long('<b', ' '),
  long('', 'a', ' a'),
  long('a ', 'a', 'b'),
  long('{{', 'a'),
  long('{', 'a'),
  { name: 'two long tokens, one ending and the other starting alike', text: (n) => `${'a'.repeat(n)} ${'a'.repeat(n)}b` },
  { name: 'mixed', text: (n) => 'word (<b>{0}</b>) %s 12.5 http://a.b/ a@b.cd &Save \\n '.repeat(n) },
]
