/**
 * Row (h3), parsing cost against patch size: patches built to provoke rescans (prose after many
 * hunks, a mailbox of many mails, `---`/`+++` pairs as hunk lines, a header thousands of
 * components deep, a `diff --git` line of one spaced name below prefixes of two lengths) parsed
 * at n and 8n. CPU per patch character must stay flat; a quadratic step
 * shows as a ratio near 8. (test/engine/parseWork.test.ts counts line reads without a clock.)
 *
 * What the row must not measure is V8's young generation, nor its compiler. With Node's
 * default (16 MB semi-spaces) a parse of the small patches dies young, while one of the 8n
 * patches outlives scavenges and is copied and promoted: 2–3× per character at 8n ÷ n from GC
 * alone, flat again from there on (header pairs at 16k…512k pairs: within 1.5× of each other),
 * and a different figure from run to run as the knee moves. So the row runs in a child process
 * whose young generation holds the largest parse and has that one size for both sizes of
 * patch (`--min-semi-space-size` = `--max-semi-space-size`: left to grow, it was small for
 * some shapes and large for others, depending on what ran before, and the same code measured
 * 0.5× to 3.9×). Each patch is parsed for a while before it is measured (the first samples
 * otherwise caught the compiler optimising the parser part-way), the two sizes' samples
 * alternate, and each sample parses one patch over and over for about 25 ms of CPU (one
 * parse of a small patch takes a fraction of a millisecond, near the resolution of the CPU
 * clock). The default-heap ratios, knee included, are printed beside the row.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parsePatch } from '../daemon/engine/index.ts';
import type { Row } from './rows.ts';
import { median, times } from './stats.ts';

const repeat = (count: number, make: (index: number) => string) => Array.from({ length: count }, (_, index) => make(index)).join('');

const SHAPES: Readonly<Record<string, (n: number) => string>> = {
  'prose after hunks': (n) => '--- a/x\n+++ b/x\n' + repeat(n, (i) => `@@ -${i * 10 + 1},5 +${i * 10 + 1},5 @@\n-a\n+b\n`) + repeat(4 * n, () => 'prose\n'),
  'mails': (n) => repeat(n, (i) => `From abc Mon Jan 1 00:00:00 2001\nSubject: s${i}\n\nbody\n`),
  'header pairs as body': (n) => `--- a/x\n+++ b/x\n@@ -1,${n} +1,${n} @@\n` + repeat(n, (i) => `--- a${i}\n+++ b${i}\n`),
  'deep header': (n) => `--- ${'o/'.repeat(n)}f\n+++ ${'n/'.repeat(n)}f\n@@ -1 +1 @@\n-a\n+b\n`,
  'spaced git line': (n) => `diff --git c/f${' x'.repeat(4 * n)} ww/f${' x'.repeat(4 * n)}\nnew file mode 100644\n`,
};

const SMALL = 2_000;
/** CPU milliseconds per sample: one patch parsed over and over until about this much went by. */
const SAMPLE_MS = 25;
/** MB per semi-space: the 8n parses allocate a few tens of MB. */
const SEMI_SPACE_MB = 128;

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** CPU milliseconds each patch is parsed for, over and over, before its samples. */
const WARM_UP_MS = 200;

/** Parses `patch` for `ms` of CPU; returns how many parses make a sample of `SAMPLE_MS`. */
function warmUp(patch: string, ms: number): number {
  const started = cpuMs();
  let runs = 0;
  do {
    parsePatch({ patch });
    runs++;
  } while (cpuMs() - started < ms);
  return Math.max(1, Math.round((runs * SAMPLE_MS) / (cpuMs() - started)));
}

/** CPU milliseconds per million characters of `patch`, parsed `repeats` times. */
function sampleOf(patch: string, repeats: number): number {
  const before = cpuMs();
  for (let run = 0; run < repeats; run++) parsePatch({ patch });
  return (cpuMs() - before) / repeats / (patch.length / 1e6);
}

/** 8n ÷ n per shape, in this process: medians of `samples` each, the two sizes alternating. */
export function parseScalingRatios(samples: number): Record<string, number> {
  return Object.fromEntries(Object.entries(SHAPES).map(([name, make]) => {
    const patches = [make(SMALL), make(SMALL * 8)] as const;
    const repeats = patches.map((patch) => warmUp(patch, WARM_UP_MS));
    const perChar: [number[], number[]] = [[], []];
    for (let sample = 0; sample < samples; sample++) patches.forEach((patch, size) => perChar[size]!.push(sampleOf(patch, repeats[size]!)));
    return [name, median(perChar[1]) / median(perChar[0])];
  }));
}

function ratiosInChild(samples: number, heapFlags: readonly string[]): Record<string, number> {
  const child = fileURLToPath(new URL('./engineParseChild.js', import.meta.url));
  const result = spawnSync(process.execPath, [...heapFlags, child, String(samples)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`the parse scaling child failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, number>;
}

const shown = (ratios: Record<string, number>) => Object.entries(ratios).map(([name, ratio]) => `${name} ${times(ratio)}`).join(', ');

export function parseScalingRow(quick: boolean): Row {
  const samples = quick ? 3 : 7;
  const ratios = ratiosInChild(samples, [`--min-semi-space-size=${SEMI_SPACE_MB}`, `--max-semi-space-size=${SEMI_SPACE_MB}`]);
  const withDefaultHeap = ratiosInChild(samples, []);
  const worst = Math.max(...Object.values(ratios));
  return {
    id: 'h3', label: 'engine: parse CPU per character, adversarial patches at 8n ÷ n (worst; young generation holding the parse)',
    ours: `${shown(ratios)} (Node's default heap, GC knee included: ${shown(withDefaultHeap)})`,
    peer: '—', value: worst, shown: times(worst), better: 'lower', goal: 1.5, goalText: '≤ 1.5× (linear)', tolerance: 2,
  };
}
