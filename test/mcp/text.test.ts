/** The text of an MCP tool result: a rejection's error stays in view however many notes the patch earned. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Receipt } from '../../protocol/index.ts';
import { receiptText } from '../../daemon/mcp/text.ts';

test('a rejected patch with hundreds of notes shows ten, says how many more, and still ends with the error', () => {
  const diagnostics = Array.from({ length: 500 }, (_, index) => ({ code: 'hunk_count_mismatch', message: `hunk ${index + 1} declares 3 old lines but has 2; the counts were ignored.` }));
  const receipt = {
    status: 'rejected', format: 'unified', files: [], diagnostics,
    error: { code: 'context_not_found', message: 'Hunk 500 of a.txt was not found.', hint: 'Re-read the file.', path: 'a.txt', hunkIndex: 499 },
  } as unknown as Receipt;
  const lines = receiptText(receipt).trimEnd().split('\n');
  const notes = lines.filter((line) => line.startsWith('note: '));
  assert.equal(notes.length, 11);
  assert.equal(notes[9], 'note: hunk 10 declares 3 old lines but has 2; the counts were ignored.');
  assert.equal(notes[10], 'note: … and 490 more (structuredContent.diagnostics lists them all)');
  assert.deepEqual(lines.slice(-3), ['error: context_not_found in a.txt, hunk 500', 'Hunk 500 of a.txt was not found.', 'hint: Re-read the file.']);
});

test('a few notes are all shown', () => {
  const receipt = { status: 'rejected', format: 'unified', files: [], diagnostics: [{ code: 'x', message: 'one' }, { code: 'y', message: 'two' }], error: { code: 'parse_error', message: 'm', hint: 'h' } } as unknown as Receipt;
  assert.deepEqual(receiptText(receipt).split('\n').filter((line) => line.startsWith('note: ')), ['note: one', 'note: two']);
});
