/**
 * Parsing is linear: every parser reads each patch line a bounded number of times, however the
 * patch is built to mislead it (header lookalikes, many mails, unterminated blocks). Work is
 * counted as reads of the line array, so the tests do not depend on the machine's speed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectTextDialect } from '../../daemon/engine/detect.ts';
import { findDirectoryMention } from '../../daemon/engine/directoryMention.ts';
import { parseEnvelope } from '../../daemon/engine/envelope.ts';
import { parsePatch, planPatch, type FileSnapshot } from '../../daemon/engine/index.ts';
import { readMailbox } from '../../daemon/engine/mail.ts';
import { splitPatchLines } from '../../daemon/engine/patchText.ts';
import { parseSearchReplace } from '../../daemon/engine/searchReplace.ts';
import { parseShellCommand } from '../../daemon/engine/shell.ts';
import type { ParsedPatch, Result } from '../../daemon/engine/types.ts';
import { parseUnified } from '../../daemon/engine/unified.ts';

/** Reads of each line allowed per parser; a rescan from each line would need thousands at these sizes. */
const READS_PER_LINE = 16;

const repeat = (count: number, make: (index: number) => string) => Array.from({ length: count }, (_, index) => make(index)).join('');

/** Patches built to provoke a rescan, each about `n` units long. */
const ADVERSARIAL: Readonly<Record<string, (n: number) => string>> = {
  'header pairs as hunk body': (n) => `--- a/x\n+++ b/x\n@@ -1,${n} +1,${n} @@\n` + repeat(n, (i) => `--- a${i}\n+++ b${i}\n`),
  'header pairs after a hunk whose counts are off': (n) => '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n' + repeat(n, (i) => `--- a${i}\n+++ b${i}\n`),
  'lone --- lines': (n) => repeat(n, (i) => `--- a${i}\n`) + '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n',
  'prose between hunks': (n) => '--- a/x\n+++ b/x\n' + repeat(n, (i) => `@@ -${i + 1} +${i + 1} @@\n-a\n+b\nprose\n`),
  'mbox From lines': (n) => repeat(n, (i) => `From abc Mon Jan 1 00:00:00 2001\nSubject: s${i}\n\nbody\n`),
  'mails with diffs': (n) => repeat(n, (i) => `From abc Mon Jan 1 00:00:00 2001\nSubject: s${i}\n\nmessage\n---\n--- a/f${i}\n+++ b/f${i}\n@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n\n`),
  'SEARCH markers without ends': (n) => 'x.py\n' + repeat(n, () => '<<<<<<< SEARCH\n'),
  'one SEARCH block never closed': (n) => 'x.py\n<<<<<<< SEARCH\n' + repeat(n, () => 'a\n'),
  'Update File lines': (n) => '*** Begin Patch\n' + repeat(n, (i) => `*** Update File: f${i}\n`) + '*** End Patch\n',
  'envelope without its end': (n) => '*** Begin Patch\n' + repeat(n, (i) => `*** Update File: f${i}\n@@\n-a\n+b\n`),
  'prose around an envelope': (n) => repeat(n, (i) => `prose ${i}\n`) + '*** Begin Patch\n*** Delete File: a\n*** End Patch\n' + repeat(n, (i) => `prose ${i}\n`),
  'a heredoc never closed': (n) => repeat(n, (i) => `prose ${i}\n`) + "cd sub && apply_patch <<'EOF'\n" + repeat(n, () => ' EOF\n'),
  'prose naming cd, then a patch command': (n) => repeat(n, (i) => `Run \`cd d${i}\` first.\n`) + "git -C sub apply <<'EOF'\n" + repeat(n, () => ' EOF\n'),
  'a fenced command, then prose': (n) => "```bash\ncd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n```\n" + repeat(n, (i) => `prose ${i}\n`),
};

type LineParser = (lines: readonly string[]) => Result<ParsedPatch> | unknown;

const PARSERS: Readonly<Record<string, LineParser>> = {
  mailbox: readMailbox,
  detect: detectTextDialect,
  unified: (lines) => parseUnified(lines),
  envelope: parseEnvelope,
  'search-replace': parseSearchReplace,
  shell: parseShellCommand,
  'directory mention': findDirectoryMention,
};

/** How many times `parse` reads an element of `lines`, per line. */
function readsPerLine(parse: LineParser, lines: readonly string[]): number {
  let reads = 0;
  const counted = new Proxy(lines, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  parse(counted);
  return reads / lines.length;
}

function linesOf(text: string): readonly string[] {
  const split = splitPatchLines(text);
  if (!split.ok) assert.fail(split.error.message);
  return split.value.lines;
}

describe('parsing work', () => {
  for (const [shape, make] of Object.entries(ADVERSARIAL)) {
    test(`${shape}: each line is read a bounded number of times by every parser`, () => {
      const lines = linesOf(make(4000));
      for (const [name, parse] of Object.entries(PARSERS)) {
        const reads = readsPerLine(parse, lines);
        assert.ok(reads <= READS_PER_LINE, `${name} read each line ${reads.toFixed(1)} times on average`);
      }
    });
  }

  test('a mailbox of many mails parses to one file per mail', () => {
    const mails = 2000;
    const result = parsePatch({ patch: ADVERSARIAL['mails with diffs']!(mails) });
    if (!result.ok) assert.fail(result.error.message);
    assert.equal(result.value.files.length, mails);
    assert.equal(result.value.series?.length, mails);
    assert.deepEqual(result.value.files.map((file) => `${file.op} ${file.path}`).slice(-2), [`update f${mails - 2}`, `update f${mails - 1}`]);
  });

  test('a hunk of 100,000 lines that look like file headers applies as hunk lines', () => {
    const count = 50_000;
    const before = repeat(count, (i) => `-- a${i}\n`);
    const after = repeat(count, (i) => `++ b${i}\n`);
    const patch = `--- a/x\n+++ b/x\n@@ -1,${count} +1,${count} @@\n` + repeat(count, (i) => `--- a${i}\n+++ b${i}\n`);
    const parsed = parsePatch({ patch });
    if (!parsed.ok) assert.fail(parsed.error.message);
    assert.equal(parsed.value.files.length, 1);
    const files = new Map<string, FileSnapshot>([['x', { kind: 'file', bytes: new TextEncoder().encode(before) }]]);
    const plan = planPatch(parsed.value, files);
    if (!plan.ok) assert.fail(plan.error.message);
    assert.equal(new TextDecoder().decode(plan.value.files[0]!.after ?? new Uint8Array()), after);
  });

  test('text around a diff of many hunks is reported once', () => {
    const hunks = 3000;
    // Counts that are off give one diagnostic per hunk; the prose after them one in all.
    const patch = '--- a/x\n+++ b/x\n' + repeat(hunks, (i) => `@@ -${i * 10 + 1},5 +${i * 10 + 1},5 @@\n-a\n+b\n`) + repeat(hunks, () => 'prose\n');
    const parsed = parsePatch({ patch });
    if (!parsed.ok) assert.fail(parsed.error.message);
    const codes = parsed.value.diagnostics.map((diagnostic) => diagnostic.code);
    assert.equal(codes.filter((code) => code === 'hunk_count_mismatch').length, hunks);
    assert.equal(codes.filter((code) => code === 'text_around_patch').length, 1);
  });
});
