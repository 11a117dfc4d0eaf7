/**
 * A long-lived daemon's first patch should cost what any later one does. At start, `serve` and
 * `mcp` begin loading chokidar (imported lazily by the first watch otherwise) and run the hot
 * path of a patch once on bytes in memory — the params schema, parse, plan, receipt — so that
 * the code is compiled before a client waits on it. No disk is touched. The one-shot CLI
 * never calls this: it runs one patch and exits.
 */
import { ApplyPatchRequest, type Receipt } from '../../protocol/index.ts';
import { planPatch, type FileSnapshot } from '../engine/index.ts';
import { runParse } from '../pool/tasks.ts';
import { loadChokidar } from '../workspace/watcher.ts';
import { failureOf, ReceiptDraft, toFileReceipt } from './receipts.ts';

const PATH = 'src/warm.ts';
const BEFORE = 'export const name = "warm";\nexport const value = 1;\nexport default value;\n';
const PATCH = `--- a/${PATH}\n+++ b/${PATH}\n@@ -1,3 +1,3 @@\n export const name = "warm";\n-export const value = 1;\n+export const value = 2;\n export default value;\n`;

/** Runs the warm-up; returns the dry-run receipt of the sample patch (what a test checks). */
export function warmUp(onError: (error: unknown) => void): Receipt {
  loadChokidar().catch(onError);
  const params = ApplyPatchRequest.params.parse({ workspaceId: 'ws_warm', patch: PATCH, format: 'unified', dryRun: true });
  const draft = new ReceiptDraft(params.atomic ?? true, params.format ?? 'auto');
  const parsed = runParse({ patch: params.patch, format: params.format });
  if (!parsed.ok) return draft.rejected(failureOf(parsed.error));
  const { dialect, diagnostics, ignoredMetadata } = parsed.value.parsed;
  draft.noteParsed({ format: dialect, diagnostics, ignoredMetadata });
  const files = new Map<string, FileSnapshot>([[PATH, { kind: 'file', bytes: new TextEncoder().encode(BEFORE) }]]);
  const plan = planPatch(parsed.value.parsed, files);
  if (!plan.ok) return draft.rejected(failureOf(plan.error));
  return draft.finish('dry_run', plan.value.files.map((file) => toFileReceipt(file, files)));
}
