/** The daemon's warm-up runs the patch path to its end (a planned change and its receipt), not an error path. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warmUp } from '../../daemon/server/warmUp.ts';

test('the warm-up plans its sample patch in memory and builds a dry_run receipt with the change', () => {
  const errors: unknown[] = [];
  const receipt = warmUp((error) => errors.push(error));
  assert.equal(receipt.error, undefined);
  assert.equal(receipt.status, 'dry_run');
  assert.equal(receipt.format, 'unified');
  assert.deepEqual(receipt.files.map((file) => [file.path, file.op]), [['src/warm.ts', 'update']]);
  assert.match(JSON.stringify(receipt.files[0]), /value = 2/);
  assert.deepEqual(errors, []);
});
