/** A recovery report in words, as the CLI prints it and the daemon logs it: each outcome, what was left as found, where the journal is. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeDamagedSegment, describedDamagedSegment, describeRecovery } from '../../daemon/workspace/recoveryText.ts';
import type { RecoveryReport } from '../../daemon/workspace/workspace.ts';
import { DamagedLogSegmentSchema, RecoverySchema } from '../../protocol/workspace.ts';

const report = (fields: Partial<RecoveryReport> & Pick<RecoveryReport, 'outcome'>): RecoveryReport => ({ transactionId: 'tx', paths: [], conflicts: [], damaged: [], ...fields });
const KEPT = '/state/journal/orphan-1-2-3-tx.journal.conflict';

test('a rollback names the paths it put back, or says none had changed yet', () => {
  assert.equal(describeRecovery(report({ outcome: 'rolled_back', paths: ['a.txt', 'd/b.txt'] })), 'rolled back, put back as before it: a.txt, d/b.txt');
  assert.equal(describeRecovery(report({ outcome: 'rolled_back' })), 'rolled back, it had changed no file yet');
});

test('a rollback that put nothing back because its paths were changed since or damaged does not say it had changed none', () => {
  assert.equal(describeRecovery(report({ outcome: 'rolled_back', conflicts: ['a.txt'] })), 'rolled back, no file put back; left as found, changed since: a.txt');
  assert.equal(describeRecovery(report({ outcome: 'rolled_back', damaged: ['a.txt'] })), 'rolled back, no file put back; left as found, its journal\'s copy is damaged: a.txt');
});

test('a roll forward names the paths whose changes stand', () => {
  assert.equal(describeRecovery(report({ outcome: 'rolled_forward', paths: ['a.txt'] })), 'rolled forward, its changes stand: a.txt');
});

test('paths left as found are all named, changed since or damaged in the journal, with where the journal is kept', () => {
  const told = describeRecovery(report({ outcome: 'rolled_back', paths: ['a.txt'], conflicts: ['b.txt', 'c.txt'], damaged: ['d.txt'], keptAside: KEPT }));
  assert.equal(told, `rolled back, put back as before it: a.txt; left as found, changed since: b.txt, c.txt; left as found, its journal's copy is damaged: d.txt; journal kept at ${KEPT}`);
});

test('a journal that does not decode: not acted on, every path its header names left as found, or none when it names none', () => {
  assert.equal(describeRecovery(report({ outcome: 'left_as_found', damaged: ['a.txt', 'b.txt'], keptAside: KEPT })), `not acted on, its journal is damaged: left as found: a.txt, b.txt; journal kept at ${KEPT}`);
  assert.equal(describeRecovery(report({ outcome: 'left_as_found', keptAside: KEPT })), `not acted on, its journal is damaged and names no path that can be read; journal kept at ${KEPT}`);
});

test('a commit of many files names its first ten, and how many more; what was left as found is never cut', () => {
  const paths = Array.from({ length: 25 }, (_, index) => `f${index}.txt`);
  assert.equal(describeRecovery(report({ outcome: 'rolled_forward', paths })), `rolled forward, its changes stand: ${paths.slice(0, 10).join(', ')} and 15 more`);
  assert.equal(describeRecovery(report({ outcome: 'left_as_found', damaged: paths })), `not acted on, its journal is damaged: left as found: ${paths.join(', ')}`);
});

test('the wire\'s Recovery (workspace/open\'s recovered, as `patchd apply --socket` gets it) is told as the report it came from, `damaged` absent when none', () => {
  const wire = RecoverySchema.parse({ transactionId: 'tx', outcome: 'rolled_back', paths: ['a.txt'], conflicts: ['b.txt'], keptAside: KEPT });
  assert.equal(describeRecovery(wire), `rolled back, put back as before it: a.txt; left as found, changed since: b.txt; journal kept at ${KEPT}`);
  const damaged = RecoverySchema.parse({ transactionId: 'tx', outcome: 'left_as_found', paths: [], conflicts: [], damaged: ['a.txt'], keptAside: KEPT });
  assert.equal(describeRecovery(damaged), describeRecovery(report({ outcome: 'left_as_found', damaged: ['a.txt'], keptAside: KEPT })));
});

test('a path holding a newline or another control character is quoted, so the report stays one line and names no path it does not hold', () => {
  const told = describeRecovery(report({ outcome: 'rolled_back', paths: ['a\nb.txt'], conflicts: ['tab\there.txt', 'plain.txt'], keptAside: '/state/j\r.conflict' }));
  assert.equal(told, 'rolled back, put back as before it: "a\\nb.txt"; left as found, changed since: "tab\\there.txt", plain.txt; journal kept at "/state/j\\r.conflict"');
  assert.doesNotMatch(told, /[\n\r\t]/);
});

test('a damaged log segment is told with every byte lost, summed over its damaged ranges, and where it is kept; the wire\'s copy is told alike', () => {
  const segment = { segment: '12-ab-0.log', keptAs: '/state/log/12-ab-0.log.damaged', damaged: [{ start: 0, end: 40 }, { start: 100, end: 102 }] };
  const told = describedDamagedSegment(segment);
  assert.deepEqual(told, { segment: '12-ab-0.log', keptAside: '/state/log/12-ab-0.log.damaged', lostBytes: 42 });
  assert.equal(describeDamagedSegment(told), '42 bytes lost in 12-ab-0.log, what was logged there is gone; kept at /state/log/12-ab-0.log.damaged; '
    + 'a commit in flight there may be left half-applied: check the files the patch or undo killed with it was changing');
  assert.equal(describeDamagedSegment(DamagedLogSegmentSchema.parse(told)), describeDamagedSegment(told));
  assert.match(describeDamagedSegment({ ...told, lostBytes: 1, keptAside: '/state\n/x.damaged' }), /^1 byte lost in 12-ab-0\.log, .*; kept at "\/state\\n\/x\.damaged";/);
});
