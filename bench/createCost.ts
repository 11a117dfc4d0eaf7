/**
 * What creating a file costs where the benchmark's workspaces live. Every applied patch creates
 * files (its temp, its undo record), and so do `git apply` and the fsync floor; on ext4 without a
 * journal each create steps over every inode freed in the last minutes, so the same code can run
 * twice as slowly after other work deleted many files. Printed beside the rows, not compared.
 */
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median } from './stats.ts';

const FILES = 200;

/** The median time to create (and close) an empty file in a fresh directory under the temp directory, in µs. */
export function fileCreateMicros(): number {
  const directory = mkdtempSync(join(tmpdir(), 'patchd-bench-create-'));
  try {
    const samples: number[] = [];
    for (let index = 0; index < FILES; index += 1) {
      const start = performance.now();
      closeSync(openSync(join(directory, `file${index}`), 'wx'));
      samples.push((performance.now() - start) * 1000);
    }
    return median(samples);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

export const describeCreate = (micros: number) => `creating a file in ${tmpdir()}: ${Math.round(micros)} µs (p50)`;
