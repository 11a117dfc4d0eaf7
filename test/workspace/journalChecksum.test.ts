/**
 * The journal header's checksum (`journal.ts`): every header written is sealed, no byte of it can
 * change unseen, and headers written before the seal still read.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { decodeJournal, decodeJournalHeader, encodeJournal } from '../../daemon/workspace/journal.ts';
import { encode } from './fixtures.ts';

const META = { format: 'unified', files: [{ path: 'dir/é.txt', op: 'update' }, { path: 'new.txt', op: 'add' }], unit: 0, units: 1 };

/** A journal of an update (a non-ASCII path: the seal covers bytes, not characters) and an add, and its header line. */
function journalBytes(): { bytes: Buffer; line: Buffer } {
  const { chunks } = encodeJournal('tx', '/root', [
    { path: 'dir/é.txt', tempName: null, trashed: false, before: { bytes: encode('old\n'), owner: { mode: 0o644, uid: 1, gid: 2 }, sha256: 'a'.repeat(64) }, afterSha256: 'b'.repeat(64) },
    { path: 'new.txt', tempName: '.new.txt.1.patchd.tmp', trashed: false, before: null, afterSha256: 'c'.repeat(64) },
  ], ['dir'], META);
  const bytes = Buffer.concat(chunks);
  return { bytes, line: bytes.subarray(0, bytes.indexOf(0x0a)) };
}

test('a header is written sealed and reads back intact', async () => {
  const { bytes, line } = journalBytes();
  assert.match(line.toString('utf8'), /,"headerCrc32":\d+\}$/);
  const header = await decodeJournalHeader(line);
  assert.equal(header?.failsChecksum, false);
  assert.equal('headerCrc32' in header!.record, false, 'the seal is no part of the record');
  assert.deepEqual((await decodeJournal(bytes))?.record.meta, META);
});

test('every bit of a sealed header line, flipped, is caught: the line no longer parses, or fails its checksum', async () => {
  const { line } = journalBytes();
  let stillParsing = 0;
  for (let at = 0; at < line.byteLength; at += 1) {
    for (let bit = 0; bit < 8; bit += 1) {
      const flipped = Buffer.from(line);
      flipped[at] = flipped[at]! ^ (1 << bit);
      const header = await decodeJournalHeader(flipped);
      if (header === undefined) continue;
      stillParsing += 1;
      assert.equal(header.failsChecksum, true, `bit ${bit} of byte ${at} (${JSON.stringify(String.fromCharCode(line[at]!))})`);
    }
  }
  assert.ok(stillParsing > 100, `flips that leave a journal header's JSON: ${stillParsing}`);
});

test('a header written before headers were sealed reads as before; one without a seal but with a key those never had fails its checksum', async () => {
  const { line } = journalBytes();
  const unsealed = Buffer.from(line.toString('utf8').replace(/,"headerCrc32":\d+\}$/, '}'));
  assert.equal((await decodeJournalHeader(unsealed))?.failsChecksum, false);
  const renamedSeal = Buffer.from(line.toString('utf8').replace('"headerCrc32"', '"headerCrc33"'));
  assert.equal((await decodeJournalHeader(renamedSeal))?.failsChecksum, true);
  assert.equal(await decodeJournal(Buffer.concat([renamedSeal, Buffer.from('\n')])), undefined, 'a journal whose header fails its checksum does not decode');
});
