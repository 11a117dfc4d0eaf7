/** The commit log read after damage: frames past a damaged one are found again and recovered, and the segment is kept aside. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { CommitLog, type DamagedSegment } from '../../daemon/workspace/commitLog.ts';
import { nodeDiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { DirectorySyncer } from '../../daemon/workspace/durable.ts';
import { JournalStore } from '../../daemon/workspace/journal.ts';
import { frameOf, framesOf, type Frame, type FrameHead } from '../../daemon/workspace/logFrames.ts';
import { RecordStore } from '../../daemon/workspace/records.ts';
import { commitAndDie, CRASH_TREE, encode, listTree, withSandbox } from './fixtures.ts';

/** A segment of `frames`, as the log writes them, and where each frame starts and ends. */
function segmentOf(frames: readonly Frame[]): { bytes: Buffer; spans: { start: number; end: number }[] } {
  const spans: { start: number; end: number }[] = [];
  const chunks = frames.map((frame) => {
    const bytes = Buffer.concat(frameOf(frame.head, [frame.body]));
    const start = spans.at(-1)?.end ?? 0;
    spans.push({ start, end: start + bytes.byteLength });
    return bytes;
  });
  return { bytes: Buffer.concat(chunks), spans };
}

const intent = (id: number, body = `journal ${id}`): Frame => ({ head: { kind: 'intent', id, journalId: `j${id}`, record: `r${id}` }, body: encode(body) });
const done = (id: number): Frame => ({ head: { kind: 'done', id }, body: new Uint8Array() });
const idsOf = (bytes: Uint8Array) => framesOf(bytes).frames.map(({ head }) => `${head.kind} ${head.id}`);
const flipped = (bytes: Buffer, at: number, mask = 0x01): Buffer => {
  const copy = Buffer.from(bytes);
  copy[at]! ^= mask;
  return copy;
};

// Bytes a reader searching for the next frame meets in a body: a whole frame but for its crc.
const DECOY = `\x17\0\0\0\x01\x02\x03\x04{"kind":"done","id":2}\n`;
const THREE = segmentOf([intent(1, `pre-image ${DECOY}`), done(1), intent(2)]);

test('a segment cut short anywhere (a torn tail) is read up to its last whole frame, with no damage', () => {
  const { bytes, spans } = THREE;
  assert.deepEqual(idsOf(bytes), ['intent 1', 'done 1', 'intent 2']);
  for (let cut = 0; cut <= bytes.byteLength; cut++) {
    const read = framesOf(bytes.subarray(0, cut));
    assert.equal(read.frames.length, spans.filter((span) => span.end <= cut).length, `cut at ${cut}`);
    assert.deepEqual(read.damaged, [], `cut at ${cut}`);
  }
});

test('a byte flipped anywhere in a frame loses that frame alone: the frames after it are read, the damage reported; in the last frame it reads as a torn tail', () => {
  const { bytes, spans } = THREE;
  const all = ['intent 1', 'done 1', 'intent 2'];
  for (const [index, span] of spans.entries()) {
    for (let at = span.start; at < span.end; at++) {
      const read = framesOf(flipped(bytes, at));
      assert.deepEqual(read.frames.map(({ head }) => `${head.kind} ${head.id}`), all.filter((_, kept) => kept !== index), `byte ${at}`);
      assert.deepEqual(read.damaged, index === spans.length - 1 ? [] : [span], `byte ${at}`);
    }
  }
});

test('a frame held in a damaged frame\'s body is not taken for one while that frame\'s length is intact', () => {
  const inner = Buffer.concat(frameOf({ kind: 'done', id: 9 }));
  const { bytes, spans } = segmentOf([intent(1), { ...intent(2), body: Buffer.concat([encode('pre-image '), inner, encode(' pre-image')]) }, intent(3)]);
  const damaged = flipped(bytes, spans[1]!.start + 20);
  assert.deepEqual(idsOf(damaged), ['intent 1', 'intent 3']);
  assert.deepEqual(framesOf(damaged).damaged, [spans[1]]);
});

test('a frame whose crc holds but whose head is not one the log writes is damage, not a frame', () => {
  for (const head of ['{"kind":"other","id":2}', '{"kind":"intent","id":2}', '{"kind":"done","id":"2"}', '{"kind":"done"', '{"kind":"intent","id":2,"journalId":"j","record":"r","redo":99}']) {
    const payload = Buffer.from(`${head}\nbody`);
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32LE(payload.byteLength, 0);
    prefix.writeUInt32LE(crc32(payload), 4);
    const first = segmentOf([intent(1)]).bytes;
    const bytes = Buffer.concat([first, prefix, payload, segmentOf([intent(3)]).bytes]);
    assert.deepEqual(idsOf(bytes), ['intent 1', 'intent 3'], head);
    assert.deepEqual(framesOf(bytes).damaged, [{ start: first.byteLength, end: first.byteLength + 8 + payload.byteLength }], head);
  }
});

/** A journal or record file name, as an intent holds one. */
const fileNameArbitrary = fc.string({ minLength: 1, maxLength: 8 }).filter((name) => name !== '.' && name !== '..' && !/[/\0]/.test(name));
const headArbitrary: fc.Arbitrary<FrameHead> = fc.oneof(
  fc.record({ kind: fc.constant('intent' as const), id: fc.nat(), journalId: fileNameArbitrary, record: fileNameArbitrary }),
  fc.record({ kind: fc.constantFrom('done' as const, 'cancelled' as const), id: fc.nat() }),
);
const bodyArbitrary = fc.array(fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.constant(encode(DECOY))), { maxLength: 3 }).map((parts) => Buffer.concat(parts));
const frameArbitrary = fc.record({ head: headArbitrary, body: bodyArbitrary }).map(({ head, body }): Frame => ({ head, body: head.kind === 'intent' ? body : new Uint8Array() }));
/** Frames numbered in order, so that each frame read names the one written. */
const framesArbitrary = fc.array(frameArbitrary, { minLength: 1, maxLength: 6 }).map((frames) => frames.map((frame, id) => ({ ...frame, head: { ...frame.head, id } })));
const flipsArbitrary = fc.array(fc.record({ at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }), { maxLength: 4 });

test('bytes flipped anywhere, with or without a torn tail, never make the reader throw or read a frame that was not written', () => {
  fc.assert(fc.property(framesArbitrary, flipsArbitrary, fc.option(fc.nat()), (frames, flips, cutAt) => {
    const { bytes, spans } = segmentOf(frames);
    const cut = cutAt === null ? bytes.byteLength : cutAt % (bytes.byteLength + 1);
    const damaged = Buffer.from(bytes.subarray(0, cut));
    const touched = flips.map(({ at, mask }) => {
      const position = at % bytes.byteLength;
      if (position < cut) damaged[position]! ^= mask;
      return position;
    });
    const read = framesOf(damaged);
    // Each frame read is a frame written, in the order written.
    const indices = read.frames.map((frame) => frames.findIndex((written, index) => spans[index]!.end <= cut && sameFrame(frame, written)));
    assert.ok(indices.every((index, at) => index >= 0 && (at === 0 || index > indices[at - 1]!)), `read ${JSON.stringify(read.frames.map(({ head }) => head))}`);
    // The frames before the first flipped byte are read, and so is the last whole frame no flip touched.
    const whole = spans.flatMap((span, index) => (span.end <= cut ? [index] : []));
    const untouched = whole.filter((index) => touched.every((at) => at < spans[index]!.start || at >= spans[index]!.end));
    const firstFlip = Math.min(...touched.filter((at) => at < cut), cut);
    for (const index of untouched.filter((candidate) => spans[candidate]!.end <= firstFlip)) assert.ok(indices.includes(index));
    if (untouched.length > 0) assert.ok(indices.includes(untouched.at(-1)!));
    // The damage reported lies between the frames read, in order.
    const readSpans = indices.map((index) => spans[index]!);
    for (const [at, range] of read.damaged.entries()) {
      assert.ok(range.start < range.end && range.end <= cut && (at === 0 || read.damaged[at - 1]!.end <= range.start));
      assert.ok(readSpans.every((span) => span.end <= range.start || span.start >= range.end));
    }
  }), { numRuns: 2000 });
});

function sameFrame(a: Frame, b: Frame): boolean {
  return JSON.stringify(a.head) === JSON.stringify(b.head) && Buffer.compare(Buffer.from(a.body), Buffer.from(b.body)) === 0;
}

/** The state dir's stores, as a workspace makes them (for a root that is never read). */
async function openStores(stateDir: string, syncer: DirectorySyncer): Promise<{ records: RecordStore; journals: JournalStore; log: CommitLog }> {
  const records = new RecordStore(stateDir, '/root', syncer, nodeDiskCalls);
  const journals = new JournalStore(stateDir, syncer, nodeDiskCalls);
  const log = new CommitLog(stateDir, syncer, nodeDiskCalls, records);
  await Promise.all([records.prepare(), journals.prepare(), log.prepare()]);
  return { records, journals, log };
}

/** A pid that belonged to a process which has exited. */
const deadPid = (): number => spawnSync('true').pid ?? 999_999;

test('unsettledRecords names the records recovery hands over: past damage too, with a done frame lost in it, not after a lost intent', async () => {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'patchd-log-test-'));
  const syncer = new DirectorySyncer(nodeDiskCalls);
  try {
    const { journals, log } = await openStores(stateDir, syncer);
    // 1's done frame and 3's intent are damaged; 3's done frame after it settles nothing; 4 was in flight.
    const { bytes, spans } = segmentOf([intent(1), done(1), intent(2), intent(3), done(2), done(3), intent(4)]);
    const damaged = flipped(flipped(bytes, spans[1]!.start + 12), spans[3]!.start + 12);
    const name = `${deadPid()}-0badc0de-1.log`;
    await writeFile(path.join(log.directory, name), damaged);

    assert.deepEqual([...await log.unsettledRecords()].sort(), ['r1', 'r4']);
    const kept = await log.recoverAbandoned(journals);
    const keptAs = path.join(log.directory, `${name}.damaged`);
    assert.deepEqual(kept, [{ segment: name, keptAs, damaged: [spans[1]!, spans[3]!] } satisfies DamagedSegment]);
    // Each named with the record name its intent logged.
    const handedOver = (await readdir(journals.directory)).map((file) => /-(r\d+)\.journal$/.exec(file)?.[1]).sort();
    assert.deepEqual(handedOver, ['r1', 'r4'], 'the intents unsettledRecords named');
    assert.deepEqual(await readdir(path.join(stateDir, 'history')), ['r2'], 'the done intent\'s record, written again');
    assert.deepEqual(await readdir(log.directory), [`${name}.damaged`]);
    assert.deepEqual(await readFile(keptAs), damaged, 'kept as it was found');
    assert.deepEqual(await log.unsettledRecords(), new Set(), 'what is kept aside is not read again');
  } finally {
    await syncer.close();
    await rm(stateDir, { recursive: true, force: true });
  }
});

test('a frame found past damage inside a patched file\'s bytes never writes or removes a file outside the state dir\'s own directories', async () => {
  const outside = await mkdtemp(path.join(os.tmpdir(), 'patchd-log-test-'));
  const stateDir = path.join(outside, 'state');
  const syncer = new DirectorySyncer(nodeDiskCalls);
  try {
    const { journals, log } = await openStores(stateDir, syncer);
    // A file an agent wrote holds log bytes (a fixture, say): an intent and its done frame naming paths out of history/ and journal/.
    const planted = segmentOf([
      { head: { kind: 'intent', id: 7, journalId: 'j7', record: '../planted.record' }, body: encode('planted bytes') }, done(7),
      { head: { kind: 'intent', id: 8, journalId: 'x/../../../planted', record: 'r8' }, body: encode('planted bytes') },
    ]).bytes;
    const { bytes, spans } = segmentOf([intent(1), done(1), { ...intent(2), body: Buffer.concat([encode('post-image '), planted]) }, done(2)]);
    // The length of the frame holding the file is damaged: the reader searches for the next whole frame.
    const name = `${deadPid()}-0badc0de-1.log`;
    await writeFile(path.join(log.directory, name), flipped(bytes, spans[2]!.start + 1, 0x40));

    await log.recoverAbandoned(journals);
    assert.deepEqual(await readdir(outside), ['state']);
    assert.deepEqual((await readdir(stateDir)).sort(), ['history', 'journal', 'log']);
    assert.deepEqual(await readdir(path.join(stateDir, 'history')), ['r1']);
  } finally {
    await syncer.close();
    await rm(outside, { recursive: true, force: true });
  }
});

for (const [index, what] of [[0, 'intent'], [1, 'done frame']] as const) {
  test(`a byte flipped in the ${what} of a settled commit does not hide the commit in flight after it: open rolls that one back and keeps the segment aside`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      // A one-file commit of keep.txt settles, then the five-file commit dies before its third rename: one segment, three frames.
      commitAndDie(sandbox, 2, 'settledFirst');
      const logDir = path.join(sandbox.state, 'log');
      const [name] = await readdir(logDir);
      assert.ok(name !== undefined);
      const file = path.join(logDir, name);
      const bytes = await readFile(file);
      assert.deepEqual(idsOf(bytes).map((frame) => frame.split(' ')[0]), ['intent', 'done', 'intent']);
      const start = index === 0 ? 0 : 8 + bytes.readUInt32LE(0);
      const end = start + 8 + bytes.readUInt32LE(start);
      await writeFile(file, flipped(bytes, start + 20));
      // Written long ago: retention counts the age of what is kept aside from when it was found damaged.
      const longAgo = new Date(Date.now() - 2 * 3_600_000);
      await utimes(file, longAgo, longAgo);

      const reports: DamagedSegment[] = [];
      const workspace = await sandbox.open({ onDamagedLogSegment: (damaged) => reports.push(damaged), retention: { maxTransactions: 1000, maxAgeMs: 3_600_000 } });
      // Its done frame lost, the settled commit is handed to journal recovery too, which finds it in place.
      const settledCommit = index === 0 ? [] : [{ outcome: 'rolled_forward', paths: ['keep.txt'], conflicts: [] }];
      assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, paths, conflicts })), [
        { outcome: 'rolled_back', paths: ['a/one.txt', 'two.txt'], conflicts: [] },
        ...settledCommit,
      ]);
      const expected = Object.fromEntries(Object.entries({ ...CRASH_TREE, 'keep.txt': 'kept\n' }).map(([path, text]) => [path, `file:${text}`]));
      assert.deepEqual(await listTree(sandbox.root), expected);
      assert.equal((await workspace.transactions(5)).length, 1, 'the settled commit keeps its undo record');
      assert.deepEqual(reports, [{ segment: name, keptAs: `${file}.damaged`, damaged: [{ start, end }] }]);
      assert.deepEqual(await readdir(logDir), [`${name}.damaged`], 'kept, though written longer ago than retention keeps');
      await workspace.close();
    });
  });
}
