/**
 * File snapshots (node:test on Node 20 has none): `snapshots/NAME` holds the reviewed value;
 * `UPDATE_SNAPSHOTS=1` rewrites it. A missing snapshot fails, so a new one is always reviewed.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export function assertSnapshot(name: string, actual: string): void {
  const file = new URL(`./snapshots/${name}`, import.meta.url);
  if (process.env.UPDATE_SNAPSHOTS === '1') writeFileSync(file, actual);
  assert.ok(existsSync(file), `no snapshot ${name}: run with UPDATE_SNAPSHOTS=1 and review the file`);
  assert.equal(actual, readFileSync(file, 'utf8'), `${name} changed: review it, then run with UPDATE_SNAPSHOTS=1`);
}
