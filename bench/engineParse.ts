/**
 * Row (h3), parsing cost against patch size: patches built to provoke rescans (prose after many
 * hunks, a mailbox of many mails, `---`/`+++` pairs as hunk lines, a header thousands of
 * components deep, a `diff --git` line of one spaced name below prefixes of two lengths) parsed
 * at n and 8n. CPU per patch character must stay flat; a quadratic step
 * shows as a ratio near 8. (test/engine/parseWork.test.ts counts line reads without a clock.)
 *
 * What the row must not measure is V8's young generation. With Node's default (16 MB
 * semi-spaces) a parse of the small patches dies young, while one of the 8n patches outlives
 * scavenges and is copied and promoted: 2–3× per character at 8n ÷ n from GC alone, flat again
 * from there on (header pairs at 16k…512k pairs: within 1.5× of each other), and a different
 * figure from run to run as the knee moves. So the row runs in a child process whose young
 * generation holds the largest parse (`--max-semi-space-size`), and each sample parses one
 * patch over and over for about 25 ms of CPU (one parse of a small patch took a fraction of
 * a millisecond, near the resolution of the CPU clock). The default-heap ratios,
 * knee included, are printed beside the row.
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

/** CPU milliseconds per million characters of patch, median of `samples`. */
function cpuPerMillionChars(patch: string, samples: number): number {
  const started = cpuMs();
  parsePatch({ patch });
  const repeats = Math.max(1, Math.ceil(SAMPLE_MS / Math.max(cpuMs() - started, 0.01)));
  const perChar: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    const before = cpuMs();
    for (let run = 0; run < repeats; run++) parsePatch({ patch });
    perChar.push((cpuMs() - before) / repeats / (patch.length / 1e6));
  }
  return median(perChar);
}

/** 8n ÷ n per shape, in this process. */
export function parseScalingRatios(samples: number): Record<string, number> {
  return Object.fromEntries(Object.entries(SHAPES).map(([name, make]) => {
    const small = make(SMALL);
    const large = make(SMALL * 8);
    cpuPerMillionChars(small, 1);
    cpuPerMillionChars(large, 1);
    return [name, cpuPerMillionChars(large, samples) / cpuPerMillionChars(small, samples)];
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
  const ratios = ratiosInChild(samples, [`--max-semi-space-size=${SEMI_SPACE_MB}`]);
  const withDefaultHeap = ratiosInChild(samples, []);
  const worst = Math.max(...Object.values(ratios));
  return {
    id: 'h3', label: 'engine: parse CPU per character, adversarial patches at 8n ÷ n (worst; young generation holding the parse)',
    ours: `${shown(ratios)} (Node's default heap, GC knee included: ${shown(withDefaultHeap)})`,
    peer: '—', value: worst, shown: times(worst), better: 'lower', goal: 1.5, goalText: '≤ 1.5× (linear)', tolerance: 2,
  };
}
