/**
 * An editor's use of patchd (a VS Code extension or any LSP client works the same way):
 * `patchd serve` is kept as a child process and spoken to through vscode-jsonrpc, like a
 * language server. A model's patch is first applied as a dry run; its receipt becomes the
 * editor's own edit — LSP `WorkspaceEdit` document changes, per file — for the user to preview;
 * on accept, patchd applies the patch with every previewed file's hash pinned, so it writes
 * exactly what was previewed, or nothing (`stale_file`) if a file changed meanwhile.
 *
 *   node --import tsx examples/editor-preview.ts [PATCHFILE]
 *
 * previews (and then applies) PATCHFILE, by default examples/patches/01-unified.diff, on a
 * scratch copy of examples/workspace.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parsePatch } from 'diff';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  ApplyPatchRequest, ExitNotification, InitializeRequest, OpenWorkspaceRequest, ShutdownRequest,
  type FileReceipt, type Receipt,
} from '../protocol/index.ts';

// The LSP shapes an editor applies (as in vscode-languageserver-types), trimmed to what is used here.
export interface Position { readonly line: number; readonly character: number }
export interface TextEdit { readonly range: { readonly start: Position; readonly end: Position }; readonly newText: string }
export type DocumentChange =
  | { readonly kind: 'create'; readonly uri: string }
  | { readonly kind: 'rename'; readonly oldUri: string; readonly newUri: string }
  | { readonly kind: 'delete'; readonly uri: string }
  | { readonly textDocument: { readonly uri: string; readonly version: null }; readonly edits: readonly TextEdit[] };
export interface WorkspaceEdit { readonly documentChanges: readonly DocumentChange[] }

/** `patchd serve` as a child process, spoken to over vscode-jsonrpc with the protocol's own method types. */
export class PatchdChild {
  private constructor(private readonly child: ChildProcessWithoutNullStreams, private readonly connection: MessageConnection) {}

  /** `bin` is the package's launcher: `node_modules/patchd/bin/patchd.js` in an extension. */
  static async start(bin = fileURLToPath(new URL('../bin/patchd.js', import.meta.url))): Promise<PatchdChild> {
    const child = spawn(process.execPath, [bin, 'serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.resume(); // JSON log lines: an extension would show them in its output channel
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    connection.listen();
    const daemon = new PatchdChild(child, connection);
    InitializeRequest.result.parse(await connection.sendRequest(InitializeRequest.type, { clientInfo: { name: 'editor-example', version: '1.0.0' } }));
    return daemon;
  }

  async openWorkspace(root: string): Promise<string> {
    return OpenWorkspaceRequest.result.parse(await this.connection.sendRequest(OpenWorkspaceRequest.type, { root })).workspaceId;
  }

  /** Plans the patch and answers what it would do; nothing is written. */
  async dryRun(workspaceId: string, patch: string): Promise<Receipt> {
    return ApplyPatchRequest.result.parse(await this.connection.sendRequest(ApplyPatchRequest.type, { workspaceId, patch, dryRun: true }));
  }

  /** Applies the patch only onto the bytes the preview was computed from. */
  async applyPreviewed(workspaceId: string, patch: string, preview: Receipt): Promise<Receipt> {
    const params = { workspaceId, patch, expectedSha256ByPath: pinnedHashes(preview) };
    return ApplyPatchRequest.result.parse(await this.connection.sendRequest(ApplyPatchRequest.type, params));
  }

  async stop(): Promise<void> {
    await this.connection.sendRequest(ShutdownRequest.type);
    await this.connection.sendNotification(ExitNotification.type);
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once('exit', resolve));
    this.connection.dispose();
  }
}

/** Every file of a dry-run receipt at the hash it had (`""`: must still not exist). */
export function pinnedHashes(preview: Receipt): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const file of preview.files) {
    if (file.op === 'add' || file.op === 'rename') pins[file.path] = '';
    if (file.sha256Before !== undefined) pins[file.fromPath ?? file.path] = file.sha256Before;
  }
  return pins;
}

/** A receipt as LSP document changes: creates, renames and deletes, and per file the text edits of its diff. */
export function toWorkspaceEdit(root: string, receipt: Receipt): WorkspaceEdit {
  const uri = (path: string) => pathToFileURL(join(root, path)).href;
  return {
    documentChanges: receipt.files.flatMap((file): DocumentChange[] => {
      const edits = { textDocument: { uri: uri(file.path), version: null }, edits: textEdits(file) };
      switch (file.op) {
        case 'add':
          return [{ kind: 'create', uri: uri(file.path) }, edits];
        case 'delete':
          return [{ kind: 'delete', uri: uri(file.path) }];
        case 'rename':
          return [{ kind: 'rename', oldUri: uri(file.fromPath ?? file.path), newUri: uri(file.path) }, ...(edits.edits.length > 0 ? [edits] : [])];
        case 'update':
          return [edits];
      }
    }),
  };
}

/**
 * One edit per run of removed and added lines of the file's diff, in the old text's line
 * numbers. New text ends lines with `\n`; editors convert it to the document's line ending.
 */
export function textEdits(file: FileReceipt): TextEdit[] {
  const edits: TextEdit[] = [];
  for (const hunk of parsePatch(file.diff)[0]?.hunks ?? []) {
    let line = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    let run: { start: number; removed: number; added: string[] } | undefined;
    const flush = () => {
      if (run !== undefined) edits.push(lineEdit(run.start, run.start + run.removed, run.added));
      run = undefined;
    };
    for (const text of hunk.lines) {
      const marker = text[0];
      if (marker === '\\') continue;
      if (marker !== '-' && marker !== '+') {
        flush();
        line += 1;
        continue;
      }
      run ??= { start: line, removed: 0, added: [] };
      if (marker === '-') {
        run.removed += 1;
        line += 1;
      } else {
        run.added.push(text.slice(1));
      }
    }
    flush();
  }
  return edits;
}

function lineEdit(startLine: number, endLine: number, lines: readonly string[]): TextEdit {
  return { range: { start: { line: startLine, character: 0 }, end: { line: endLine, character: 0 } }, newText: lines.map((line) => `${line}\n`).join('') };
}

/** What an editor does with a document's text edits (all ranges refer to the original text). */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  const offset = ({ line, character }: Position) => Math.min((lineStarts[line] ?? text.length) + character, text.length);
  return [...edits]
    .sort((a, b) => offset(b.range.start) - offset(a.range.start))
    .reduce((result, edit) => result.slice(0, offset(edit.range.start)) + edit.newText + result.slice(offset(edit.range.end)), text);
}

async function main(patchFile: string): Promise<void> {
  const examples = fileURLToPath(new URL('.', import.meta.url));
  const scratch = mkdtempSync(join(tmpdir(), 'patchd-editor-'));
  const daemon = await PatchdChild.start();
  try {
    cpSync(join(examples, 'workspace'), scratch, { recursive: true });
    const patch = readFileSync(patchFile, 'utf8');
    const workspaceId = await daemon.openWorkspace(scratch);
    const preview = await daemon.dryRun(workspaceId, patch);
    if (preview.status === 'rejected') {
      console.log(`patchd would reject this patch: ${preview.error?.code}: ${preview.error?.hint}`);
      return;
    }
    console.log('Preview (LSP WorkspaceEdit):');
    console.log(JSON.stringify(toWorkspaceEdit(scratch, preview), null, 2));
    const applied = await daemon.applyPreviewed(workspaceId, patch, preview);
    console.log(`Accepted: ${applied.status}${applied.error === undefined ? '' : ` (${applied.error.code})`}`);
  } finally {
    await daemon.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? fileURLToPath(new URL('patches/01-unified.diff', import.meta.url)));
}
