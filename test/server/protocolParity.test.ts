/**
 * The protocol keeps its own copy of the engine's vocabulary (client/ may import only
 * protocol/); these checks, at compile time and at run time, keep the copies identical.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as engine from '../../daemon/engine/index.ts';
import * as protocol from '../../protocol/index.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(): T | undefined => undefined;

expectType<Equal<typeof protocol.ERROR_HINTS, typeof engine.ERROR_HINTS>>();
expectType<Equal<protocol.ErrorCode, engine.ErrorCode>>();
expectType<Equal<protocol.Dialect, engine.Dialect>>();
expectType<Equal<protocol.MatchTier, engine.MatchTier>>();
expectType<Equal<protocol.V4AOperation['type'], engine.V4AOperation['type']>>();
expectType<protocol.FormatName extends engine.FormatName ? true : false>();

test('the wire error table equals the engine table, code for code, hint for hint, in order', () => {
  assert.deepEqual(protocol.ERROR_HINTS, engine.ERROR_HINTS);
  assert.deepEqual(Object.keys(protocol.ERROR_HINTS), Object.keys(engine.ERROR_HINTS));
  assert.deepEqual(protocol.ERROR_CODES, engine.ERROR_CODES);
});

test('every accepted format is a dialect, and auto is not listed', () => {
  for (const format of protocol.FORMATS) assert.ok((protocol.DIALECTS as readonly string[]).includes(format));
  assert.ok(!(protocol.FORMATS as readonly string[]).includes('auto'));
});
