/**
 * The filesystem floor: the least a durable writer must do to replace a file — write a temp
 * file beside it, fsync it, rename it over the target — measured in this Node process, on the
 * same filesystem as the workspaces, with the same bytes patchd writes.
 */
import { execFileSync } from 'node:child_process';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { runConcurrently } from './stats.ts';
import { fileName, patchedText } from './tree.ts';

async function replaceDurably(target: string, text: string): Promise<void> {
  const temp = `${target}.floor.tmp`;
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, target);
}

/** Files `[first, first + count)` of the tree at `root` replaced, `inFlight` at a time: files per second. */
export async function parallelFloor(root: string, first: number, count: number, inFlight: number): Promise<number> {
  const wallMs = await runConcurrently(count, inFlight, (index) => replaceDurably(join(root, fileName(first + index)), patchedText(first + index)));
  return count / (wallMs / 1000);
}

/** `parallelFloor` in a child process whose libuv threadpool has `threads` threads. */
export function parallelFloorWithThreads(root: string, first: number, count: number, inFlight: number, threads: number): number {
  const script = new URL(import.meta.url.endsWith('.ts') ? './floorProcess.ts' : './floorProcess.js', import.meta.url);
  const output = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(script), root, String(first), String(count), String(inFlight)], {
    env: { ...process.env, UV_THREADPOOL_SIZE: String(threads) },
    encoding: 'utf8',
  });
  return Number(output.trim());
}

/** One replacement of file `index` of the tree at `root`, alone: its wall time in ms. */
export async function oneFileFloor(root: string, index: number, round: number): Promise<number> {
  const started = performance.now();
  await replaceDurably(join(root, fileName(index)), `${patchedText(index)}// round ${round}\n`);
  return performance.now() - started;
}
