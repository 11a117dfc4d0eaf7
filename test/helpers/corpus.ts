/** Reading the external conformance corpus (`../shared/conformance` or `$PATCHD_CONFORMANCE_DIR`). */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { V4AOperation } from '../../daemon/engine/index.ts';

export const SUITES = ['codex', 'eol', 'git-history', 'llm-unified', 'search-replace', 'v4a'] as const;

export interface CorpusCase {
  readonly id: string;
  readonly suite: string;
  readonly format: 'unified' | 'codex' | 'v4a' | 'search-replace';
  readonly expect: 'apply' | 'reject';
  readonly error?: string;
  readonly dir: string;
  readonly patch?: string;
  readonly operations?: V4AOperation[];
  readonly input: Map<string, Uint8Array>;
  readonly expected: Map<string, Uint8Array>;
}

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The corpus directory: `$PATCHD_CONFORMANCE_DIR` when set, else `../shared/conformance`; undefined when it is not there. */
export function findCorpus(): string | undefined {
  const configured = process.env.PATCHD_CONFORMANCE_DIR;
  const dir = configured !== undefined && configured !== '' ? configured : join(repoRoot, '..', 'shared', 'conformance');
  return existsSync(join(dir, 'README.md')) ? dir : undefined;
}

/**
 * The corpus for a conformance runner. When it is missing, declares one test that says so:
 * under CI (`CI=true`) the corpus must be there, so the test runs and fails; on a user's clone
 * it is reported as skipped.
 */
export function corpusForRunner(): string | undefined {
  const corpus = findCorpus();
  if (corpus !== undefined) return corpus;
  const where = '../shared/conformance or $PATCHD_CONFORMANCE_DIR';
  const skip = process.env.CI === 'true' ? false : `no conformance corpus beside this checkout (${where}): skipped`;
  test('conformance corpus', { skip }, () => {
    assert.fail(`CI=true but no conformance corpus at ${where}`);
  });
  return undefined;
}

export function loadSuite(corpus: string, suite: string): CorpusCase[] {
  const suiteDir = join(corpus, suite);
  return readdirSync(suiteDir).sort().map((id) => loadCase(join(suiteDir, id)));
}

function loadCase(dir: string): CorpusCase {
  const meta = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')) as Omit<CorpusCase, 'dir' | 'input' | 'expected'>;
  const patchFile = join(dir, 'patch.txt');
  const operationsFile = join(dir, 'operations.json');
  return {
    ...meta,
    dir,
    patch: existsSync(patchFile) ? readFileSync(patchFile, 'utf8') : undefined,
    operations: existsSync(operationsFile) ? (JSON.parse(readFileSync(operationsFile, 'utf8')) as V4AOperation[]) : undefined,
    input: readTree(join(dir, 'input')),
    expected: readTree(join(dir, 'expected')),
  };
}

/** Every regular file under `dir`, keyed by its slash-separated relative path. Missing dir → empty. */
export function readTree(dir: string): Map<string, Uint8Array> {
  const tree = new Map<string, Uint8Array>();
  if (!existsSync(dir)) return tree;
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const full = join(current, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(full);
      else if (stat?.isFile()) tree.set(relative(dir, full).split(sep).join('/'), new Uint8Array(readFileSync(full)));
    }
  };
  walk(dir);
  return tree;
}

/** Every regular file under `dir` as UTF-8 text, keyed as `readTree` keys it. */
export function readTextTree(dir: string): Map<string, string> {
  return new Map([...readTree(dir)].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
}

/** A description of how two trees differ, or undefined when they hold the same files and bytes. */
export function diffTrees(actual: ReadonlyMap<string, Uint8Array>, expected: ReadonlyMap<string, Uint8Array>): string | undefined {
  const problems: string[] = [];
  for (const [path, bytes] of expected) {
    const got = actual.get(path);
    if (!got) problems.push(`missing ${path}`);
    else if (Buffer.compare(Buffer.from(got), Buffer.from(bytes)) !== 0) {
      problems.push(`bytes differ in ${path}:\n  expected ${JSON.stringify(Buffer.from(bytes).toString('utf8').slice(0, 400))}\n  actual   ${JSON.stringify(Buffer.from(got).toString('utf8').slice(0, 400))}`);
    }
  }
  for (const path of actual.keys()) if (!expected.has(path)) problems.push(`unexpected ${path}`);
  return problems.length === 0 ? undefined : problems.join('\n');
}
