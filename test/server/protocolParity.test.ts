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

const CODEX = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n';
/** One patch per format, as the engine takes it. */
const SAMPLES: Record<string, engine.PatchInput> = {
  unified: { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' },
  codex: { patch: CODEX },
  v4a: { operations: [{ type: 'update_file', path: 'a.txt', diff: '@@\n-a\n+b\n' }] },
  'search-replace': { patch: 'a.txt\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n' },
  edits: { edits: [{ path: 'a.txt', oldText: 'a', newText: 'b' }] },
  shell: { patch: `apply_patch <<'EOF'\n${CODEX}EOF\n` },
};

test('the engine parses a patch under each format the protocol lists, and names it that dialect; auto detects it', () => {
  assert.deepEqual(Object.keys(SAMPLES).sort(), [...protocol.FORMATS].sort(), 'one sample per listed format');
  for (const format of protocol.FORMATS) {
    const input = SAMPLES[format]!;
    const parsed = engine.parsePatch({ ...input, format });
    assert.ok(parsed.ok, `${format}: ${parsed.ok ? '' : parsed.error.message}`);
    assert.equal(parsed.value.dialect, format);
    assert.ok(engine.parsePatch(input).ok, `${format} is detected`);
  }
  assert.ok(!(protocol.FORMATS as readonly string[]).includes('auto'));
});

test('the engine\'s limits mirror the protocol\'s bounds, so whatever the engine accepts a receipt can carry', () => {
  assert.equal(engine.LIMITS.maxPathChars, protocol.MAX_PATH_CHARS);
  assert.equal(engine.LIMITS.maxFiles, protocol.MAX_FILES);
  assert.equal(engine.LIMITS.maxHunks, protocol.MAX_HUNKS);
  assert.equal(engine.LIMITS.maxOperations, protocol.MAX_OPERATIONS);
});
