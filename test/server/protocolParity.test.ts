/**
 * The protocol names dialects, tiers and operations in zod schemas, the engine in plain types;
 * these checks keep the two vocabularies identical (the error table itself is shared).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as engine from '../../daemon/engine/index.ts';
import * as protocol from '../../protocol/index.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(): T | undefined => undefined;

expectType<Equal<protocol.Dialect, engine.Dialect>>();
expectType<Equal<protocol.MatchTier, engine.MatchTier>>();
expectType<Equal<protocol.V4AOperation['type'], engine.V4AOperation['type']>>();
expectType<protocol.FormatName extends engine.FormatName ? true : false>();

test('every accepted format is a dialect, and auto is not listed', () => {
  for (const format of protocol.FORMATS) assert.ok((protocol.DIALECTS as readonly string[]).includes(format));
  assert.ok(!(protocol.FORMATS as readonly string[]).includes('auto'));
});
