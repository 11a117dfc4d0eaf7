/**
 * Row (h3), parsing cost against patch size: patches built to provoke rescans (prose after many
 * hunks, a mailbox of many mails, `---`/`+++` pairs as hunk lines, a header thousands of
 * components deep, a `diff --git` line of one spaced name below prefixes of two lengths) parsed
 * at n and 8n. A rescan shows as a cost per patch character that grows with the patch; a
 * quadratic step as 8n ÷ n near 8. (test/engine/parseWork.test.ts counts line reads without a clock.)
 *
 * What the row must not measure is the machine under the parser. Two things raise the cost per
 * character of every patch between these sizes, an ordinary one too:
 * - garbage collection: a parse of a small patch dies young, one of an 8n patch outlives
 *   scavenges and is copied and promoted. Each sample therefore counts the parser's own time,
 *   its wall time less the collector's pauses within it (`gc` performance entries). (Pinning the
 *   young generation at 128 MB instead, as this row did before, made every parse several times
 *   slower: allocation then streams through memory no cache holds.)
 * - the memory caches: on this machine the parse of any patch costs 2–3× more per character once
 *   it outgrows about 150k characters (hunks of context, removed and added lines measured at
 *   500 to 64,000 hunk lines: flat below, a step, flat above).
 * So each shape's 8n ÷ n is divided by that of a plain patch of the same sizes, parsed the same
 * way: the step both share cancels, a rescan does not (a quadratic one still shows near 3).
 *
 * It runs in a child process (a fresh compiler state, nothing left by the other rows); each patch
 * is parsed for a while before it is measured (the first samples otherwise caught the compiler
 * optimising the parser part-way), the two sizes' samples alternate, and each sample parses one
 * patch over and over for about 25 ms.
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parsePatch } from '../daemon/engine/index.ts';
import type { Row } from './rows.ts';
import { median, times } from './stats.ts';

const repeat = (count: number, make: (index: number) => string) => Array.from({ length: count }, (_, index) => make(index)).join('');

/** The reference: hunks of context, removed and added lines, nothing to mislead the parser. */
const PLAIN = 'plain hunks';

const SHAPES: Readonly<Record<string, (n: number) => string>> = {
  [PLAIN]: (n) => `--- a/x\n+++ b/x\n@@ -1,${n} +1,${n} @@\n` + repeat(n, (i) => ` c${i}\n-a${i}\n+b${i}\n`),
  'prose after hunks': (n) => '--- a/x\n+++ b/x\n' + repeat(n, (i) => `@@ -${i * 10 + 1},5 +${i * 10 + 1},5 @@\n-a\n+b\n`) + repeat(4 * n, () => 'prose\n'),
  'mails': (n) => repeat(n, (i) => `From abc Mon Jan 1 00:00:00 2001\nSubject: s${i}\n\nbody\n`),
  'header pairs as body': (n) => `--- a/x\n+++ b/x\n@@ -1,${n} +1,${n} @@\n` + repeat(n, (i) => `--- a${i}\n+++ b${i}\n`),
  'deep header': (n) => `--- ${'o/'.repeat(n)}f\n+++ ${'n/'.repeat(n)}f\n@@ -1 +1 @@\n-a\n+b\n`,
  'spaced git line': (n) => `diff --git c/f${' x'.repeat(4 * n)} ww/f${' x'.repeat(4 * n)}\nnew file mode 100644\n`,
};

const SMALL = 2_000;
/** Milliseconds per sample: one patch parsed over and over until about this much went by. */
const SAMPLE_MS = 25;
/** Milliseconds each patch is parsed for, over and over, before its samples. */
const WARM_UP_MS = 200;

/** Parses `patch` for `ms`; returns how many parses make a sample of `SAMPLE_MS`. */
function warmUp(patch: string, ms: number): number {
  const started = performance.now();
  let runs = 0;
  do {
    parsePatch({ patch });
    runs++;
  } while (performance.now() - started < ms);
  return Math.max(1, Math.round((runs * SAMPLE_MS) / (performance.now() - started)));
}

/** The collector's pauses, as the observer delivers them (on a later turn of the event loop). */
class CollectorPauses {
  readonly #entries: PerformanceEntry[] = [];
  readonly #observer = new PerformanceObserver((list) => this.#entries.push(...list.getEntries()));

  constructor() {
    this.#observer.observe({ entryTypes: ['gc'] });
  }

  /** Milliseconds of pauses that started within [from, to), once their entries have arrived; every entry seen so far is then dropped. */
  async within(from: number, to: number): Promise<number> {
    await nextTurn();
    await nextTurn();
    const inside = this.#entries.filter((entry) => entry.startTime >= from && entry.startTime < to);
    this.#entries.length = 0;
    return inside.reduce((total, entry) => total + entry.duration, 0);
  }

  stop(): void {
    this.#observer.disconnect();
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The parser's own milliseconds per million characters of `patch`, parsed `repeats` times. */
async function sampleOf(patch: string, repeats: number, pauses: CollectorPauses): Promise<number> {
  const before = performance.now();
  for (let run = 0; run < repeats; run++) parsePatch({ patch });
  const after = performance.now();
  const collecting = await pauses.within(before, after);
  return (after - before - collecting) / repeats / (patch.length / 1e6);
}

/** 8n ÷ n per shape, in this process: medians of `samples` each, the two sizes alternating. */
export async function parseScalingRatios(samples: number): Promise<Record<string, number>> {
  const pauses = new CollectorPauses();
  const ratios: Record<string, number> = {};
  for (const [name, make] of Object.entries(SHAPES)) {
    const patches = [make(SMALL), make(SMALL * 8)] as const;
    const repeats = patches.map((patch) => warmUp(patch, WARM_UP_MS));
    const perChar: [number[], number[]] = [[], []];
    for (let sample = 0; sample < samples; sample++) {
      for (const size of [0, 1] as const) perChar[size].push(await sampleOf(patches[size], repeats[size]!, pauses));
    }
    ratios[name] = median(perChar[1]) / median(perChar[0]);
  }
  pauses.stop();
  return ratios;
}

function ratiosInChild(samples: number): Record<string, number> {
  const child = fileURLToPath(new URL('./engineParseChild.js', import.meta.url));
  const result = spawnSync(process.execPath, [child, String(samples)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`the parse scaling child failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, number>;
}

export function parseScalingRow(quick: boolean): Row {
  const { [PLAIN]: plain, ...shapes } = ratiosInChild(quick ? 3 : 7);
  const relative = Object.entries(shapes).map(([name, ratio]) => ({ name, ratio, relative: ratio / plain! }));
  const worst = Math.max(...relative.map((shape) => shape.relative));
  return {
    id: 'h3', label: 'engine: parse time per character, adversarial patches at 8n ÷ n, against a plain patch\'s (worst; GC pauses excluded)',
    ours: relative.map((shape) => `${shape.name} ${times(shape.relative)} (${times(shape.ratio)})`).join(', '),
    peer: `a plain patch: ${times(plain!)}`, value: worst, shown: times(worst), better: 'lower', goal: 1.5, goalText: '≤ 1.5× (linear)', tolerance: 2,
  };
}
