/**
 * Importing this gives the test process — and every daemon or CLI it spawns, through the
 * environment — a private state root for journals and trash, removed when the process exits,
 * so a test run leaves nothing behind in the system temp dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TEST_STATE_ROOT = mkdtempSync(join(tmpdir(), 'patchd-test-state-'));
process.env.PATCHD_STATE_DIR = TEST_STATE_ROOT;
process.on('exit', () => rmSync(TEST_STATE_ROOT, { recursive: true, force: true }));
