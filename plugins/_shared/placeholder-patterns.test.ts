// Placeholder patterns on their own: keys that ignore spacing, printf against percentages in prose,
// custom patterns claiming text first, positional braces, Lisp's `~~`, character entities.
import { describe, expect, it } from 'vitest'
import { findPlaceholders, isCharacterEntity } from './placeholder-patterns.js'

const found = (text: string, options?: Parameters<typeof findPlaceholders>[1]) => findPlaceholders(text, options).map((p) => [p.format, p.key, p.start, p.end])

describe('findPlaceholders', () => {
  it('keys ${...} and $t(...) without their spacing', () => {
    expect(found('Hi ${ user   name }, $t( common:ok ) now')).toEqual([['dollar-brace', '${user name}', 3, 19], ['i18next-nesting', '$t(common:ok)', 21, 36]])
  })

  it('tells %name% from printf conversions followed by a percent sign', () => {
    expect(found('%dd% and %name% and %a%')).toEqual([['percent-name', '%dd%', 0, 4], ['percent-name', '%name%', 9, 15], ['printf', '%a', 20, 22]])
  })

  it('takes a space-flag conversion as a placeholder only where it cannot be prose', () => {
    expect(found('50 % done, Count: % d items, 5 % e')).toEqual([['printf', '% d', 18, 21]])
  })

  it('lets custom patterns claim text first, and keys positional braces alike', () => {
    expect(found('Hi [[name]] and {0} {:>8} {}', { custom: [/\[\[\w+\]\]/g] })).toEqual([['custom', '[[name]]', 3, 11], ['brace', '{0}', 16, 19], ['brace', '{}', 20, 25], ['brace', '{}', 26, 28]])
    expect(found('Hi [[name]] and {0}', { formats: ['brace'] })).toEqual([['brace', '{0}', 16, 19]])
    expect(found('No placeholder here', { custom: [/here/g] })).toEqual([['custom', 'here', 15, 19]])
    expect(found('{a} then } then {b}')).toEqual([['brace', '{a}', 0, 3], ['brace', '{b}', 16, 19]])
    expect(found('No placeholder here')).toEqual([])
  })

  it('reads ~~ as an escaped tilde in Lisp format strings', () => {
    expect(found('~~ and ~a', { formats: ['lisp'] })).toEqual([['lisp', '~a', 7, 9]])
    expect(found('~~a', { formats: ['lisp'] })).toEqual([])
  })

  it('answers the same for a text asked again', () => {
    const text = 'Hello %s, you have %d files'
    expect(found(text)).toEqual(found(text))
    expect(found(text)).toEqual([['printf', '%s', 6, 8], ['printf', '%d', 19, 21]])
  })
})

describe('isCharacterEntity', () => {
  it('knows numeric references, named characters and accented letters; other names are placeholders', () => {
    expect(['#169', '#x00A9', 'copy', 'eacute', 'Xacute'].map(isCharacterEntity)).toEqual([true, true, true, true, true])
    expect(['#xZZ', '#', '#12a', 'x#12', 'ab', 'brandShortName'].map(isCharacterEntity)).toEqual([false, false, false, false, false, false])
  })
})
