/** The lexical path rules, and the shortcut for paths that are already normal. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { engineError } from '../../daemon/engine/errors.ts';
import { LIMITS } from '../../daemon/engine/limits.ts';
import { normalizePatchPath } from '../../daemon/engine/paths.ts';

function outcome(raw: string): string {
  const result = normalizePatchPath(raw);
  return result.ok ? `ok ${result.value}` : `${result.error.code} ${result.error.path ?? ''}`;
}

test('paths are normalised, and escapes, the root and directories refused', () => {
  const cases: [string, string][] = [
    ['src/a.ts', 'ok src/a.ts'],
    ['a', 'ok a'],
    ['...', 'ok ...'],
    ['.env', 'ok .env'],
    ['a/..b/c..', 'ok a/..b/c..'],
    ['a:b', 'path_escape a:b'],
    ['1:b', 'ok 1:b'],
    ['ab:c', 'ok ab:c'],
    ['./src//a.ts', 'ok src/a.ts'],
    ['src/x/../a.ts', 'ok src/a.ts'],
    ['', 'parse_error '],
    ['/etc/passwd', 'path_escape /etc/passwd'],
    ['~/x', 'path_escape ~/x'],
    ['C:/x', 'path_escape C:/x'],
    ['a\\b', 'path_escape a\\b'],
    ['a\0b', 'path_escape a\0b'],
    ['../x', 'path_escape ../x'],
    ['a/../../x', 'path_escape a/../../x'],
    ['.', 'path_escape .'],
    ['a/..', 'path_escape a/..'],
    ['src/', 'is_directory src'],
    ['src/.', 'is_directory src'],
    ['src/a/..', 'is_directory src'],
  ];
  for (const [raw, expected] of cases) assert.equal(outcome(raw), expected, JSON.stringify(raw));
});

/** The rules of `normalizePatchPath`, written out plainly: the shortcut must agree with them on every input. */
function byTheRules(raw: string): string {
  if (raw === '') return 'parse_error ';
  if (raw.includes('\0') || raw.includes('\\') || raw.startsWith('/') || raw.startsWith('~') || /^[A-Za-z]:/.test(raw)) return `path_escape ${raw}`;
  const parts: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '..') {
      if (parts.pop() === undefined) return `path_escape ${raw}`;
    } else if (segment !== '' && segment !== '.') {
      parts.push(segment);
    }
  }
  if (parts.length === 0) return `path_escape ${raw}`;
  const last = raw.slice(raw.lastIndexOf('/') + 1);
  if (last === '' || last === '.' || last === '..') return `is_directory ${parts.join('/')}`;
  return `ok ${parts.join('/')}`;
}

test('every path gets what the full rules give it (property)', () => {
  const piece = fc.constantFrom('a', 'b', 'src', '.', '..', '...', '.a', 'a.', '/', '//', '\\', '\0', '~', ':', 'C:', 'c:', '');
  const path = fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join(''));
  fc.assert(fc.property(fc.oneof(path, fc.string({ maxLength: 12 })), (raw) => {
    assert.equal(outcome(raw), byTheRules(raw));
  }), { numRuns: 20_000 });
});

test(`a path longer than ${LIMITS.maxPathChars} characters once normalised is limit_exceeded, naming the limit and not the path`, () => {
  const max = LIMITS.maxPathChars;
  assert.equal(outcome('z'.repeat(max)), `ok ${'z'.repeat(max)}`);
  for (const raw of ['z'.repeat(max + 1), 'z'.repeat(5_000), `${'d/'.repeat(2_500)}x`, `./${'z'.repeat(max + 1)}`]) {
    const result = normalizePatchPath(raw);
    assert.ok(!result.ok, `${raw.length} characters accepted`);
    assert.equal(result.error.code, 'limit_exceeded');
    assert.deepEqual(result.error.limit, { name: 'maxPathChars', max, actual: raw.replace(/^\.\//, '').length });
    assert.equal(result.error.path, undefined);
    assert.ok(result.error.message.includes(String(max)), result.error.message);
    assert.ok(result.error.message.length < 300, 'the message shows only the start of the path');
  }
  // Long only as written: the name it normalises to is what a receipt carries.
  assert.equal(outcome(`${'./'.repeat(2_500)}x`), 'ok x');
  assert.equal(outcome(`a${'/'.repeat(10_000)}b`), 'ok a/b');
  // An escape stays an escape, however long; its error leaves out a path no receipt could carry.
  for (const raw of [`/${'z'.repeat(max)}`, `${'../'.repeat(2_000)}x`, `${'z'.repeat(max)}\\x`]) {
    const result = normalizePatchPath(raw);
    assert.equal(result.ok ? 'ok' : `${result.error.code} ${result.error.path}`, 'path_escape undefined');
    assert.ok(!result.ok && result.error.message.length < 300);
  }
});

test('an engine error never carries a path longer than a receipt may hold', () => {
  const max = LIMITS.maxPathChars;
  assert.equal(engineError('io_error', 'x', { path: 'z'.repeat(max) }).path?.length, max);
  assert.equal(engineError('io_error', 'x', { path: 'z'.repeat(max + 1) }).path, undefined);
});
