/**
 * Row (h3), parsing cost against patch size: patches built to provoke rescans (prose after many
 * hunks, a mailbox of many mails, `---`/`+++` pairs as hunk lines, a header thousands of
 * components deep) parsed at n and 8n. CPU per patch character must stay flat; a quadratic step
 * shows as a ratio near 8. (test/engine/parseWork.test.ts counts line reads without a clock.)
 */
import { parsePatch } from '../daemon/engine/index.ts';
import type { Row } from './rows.ts';
import { median, times } from './stats.ts';

const repeat = (count: number, make: (index: number) => string) => Array.from({ length: count }, (_, index) => make(index)).join('');

const SHAPES: Readonly<Record<string, (n: number) => string>> = {
  'prose after hunks': (n) => '--- a/x\n+++ b/x\n' + repeat(n, (i) => `@@ -${i * 10 + 1},5 +${i * 10 + 1},5 @@\n-a\n+b\n`) + repeat(4 * n, () => 'prose\n'),
  'mails': (n) => repeat(n, (i) => `From abc Mon Jan 1 00:00:00 2001\nSubject: s${i}\n\nbody\n`),
  'header pairs as body': (n) => `--- a/x\n+++ b/x\n@@ -1,${n} +1,${n} @@\n` + repeat(n, (i) => `--- a${i}\n+++ b${i}\n`),
  'deep header': (n) => `--- ${'o/'.repeat(n)}f\n+++ ${'n/'.repeat(n)}f\n@@ -1 +1 @@\n-a\n+b\n`,
};

const SMALL = 2_000;

/** CPU milliseconds per million characters of patch, median of `runs`. */
function cpuPerMillionChars(patch: string, runs: number): number {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    const before = process.cpuUsage();
    parsePatch({ patch });
    const spent = process.cpuUsage(before);
    samples.push((spent.user + spent.system) / 1000 / (patch.length / 1e6));
  }
  return median(samples);
}

export function parseScalingRow(quick: boolean): Row {
  const runs = quick ? 3 : 7;
  const ratios = Object.entries(SHAPES).map(([name, make]) => {
    const small = make(SMALL);
    const large = make(SMALL * 8);
    cpuPerMillionChars(small, 2);
    return { name, ratio: cpuPerMillionChars(large, runs) / cpuPerMillionChars(small, runs) };
  });
  const worst = Math.max(...ratios.map((entry) => entry.ratio));
  return {
    id: 'h3', label: 'engine: parse CPU per character, adversarial patches at 8n ÷ n (worst)',
    ours: ratios.map((entry) => `${entry.name} ${times(entry.ratio)}`).join(', '),
    peer: '—', value: worst, shown: times(worst), better: 'lower', goal: 1.5, goalText: '≤ 1.5× (linear)', tolerance: 2,
  };
}
