/**
 * The engine's data model. Every dialect parser produces a `ParsedPatch`; the planner turns a
 * `ParsedPatch` plus the current bytes of the files it names into a `Plan`. All plain data:
 * it crosses the worker boundary by structured clone.
 */
import type { EngineError } from './errors.ts';

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: EngineError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(error: EngineError): Result<T> => ({ ok: false, error });

/** Dialects the engine parses. `auto` detects one of these. */
export type Dialect = 'unified' | 'codex' | 'v4a' | 'search-replace' | 'edits' | 'shell';
export type FormatName = 'auto' | Dialect;

export interface V4AOperation {
  readonly type: 'create_file' | 'update_file' | 'delete_file';
  readonly path: string;
  readonly diff?: string | undefined;
}

/** str_replace-style structured edits (OpenCode edit, Anthropic text editor, MCP edit_file) and whole-file writes. */
export type StructuredEdit =
  | { readonly path: string; readonly oldText: string; readonly newText: string; readonly replaceAll?: boolean | undefined }
  | { readonly path: string; readonly insertLine: number; readonly text: string }
  /** Whole-file write: creates, or replaces when `expectedSha256` (checked by the workspace) is given. */
  | { readonly path: string; readonly content: string; readonly expectedSha256?: string | undefined };

export interface PatchInput {
  readonly patch?: string | undefined;
  readonly operations?: readonly V4AOperation[] | undefined;
  readonly edits?: readonly StructuredEdit[] | undefined;
  readonly format?: FormatName | undefined;
  /** Leading components to remove from every unified diff path (`patch -pN`); absent: worked out (strip.ts). */
  readonly strip?: number | undefined;
  /**
   * Set by a caller that can look at the workspace: when the strip level of a unified diff depends
   * on which files exist, the result carries `pathProbe` (see there).
   */
  readonly probe?: boolean | undefined;
  /** The answer to a `pathProbe`: those of its paths that are files in the workspace. */
  readonly existingPaths?: readonly string[] | undefined;
  /** With it, those of its paths the workspace refuses to look at (a link, one leading outside, `.git/`): not known to be missing. */
  readonly refusedPaths?: readonly string[] | undefined;
  /** Parse the patch, then invert it (see `reverse.ts`). */
  readonly reverse?: boolean | undefined;
}

export interface Diagnostic {
  /** e.g. `hunk_count_mismatch`, `text_around_patch`, `fenced_patch`. */
  readonly code: string;
  readonly message: string;
  readonly path?: string | undefined;
  readonly hunkIndex?: number | undefined;
}

export type HunkLineKind = 'context' | 'remove' | 'add';

export interface HunkLine {
  readonly kind: HunkLineKind;
  /** The line's text without its line ending (a CR that is content is kept). */
  readonly text: string;
}

export interface Hunk {
  /**
   * 1-based `old_start` from a unified header: a search hint, and where a hunk found elsewhere may
   * show itself applied already (`appliedBefore`, hunks.ts). Absent when the header had no numbers.
   */
  readonly oldStart?: number | undefined;
  /** Codex / V4A `@@ anchor` lines, outermost first: binding, the hunk is searched after them. */
  readonly anchors: readonly string[];
  readonly lines: readonly HunkLine[];
  /**
   * The hunk must end at the end of the file: `*** End of File`, a `\ No newline at end of file`
   * marker (the lines after a hunk are the same on both sides, so where one side ends, so does the
   * other), or a git diff's hunk without context after its last change (`fileEdges.ts`).
   */
  readonly atEndOfFile: boolean;
  /** The hunk must begin at the first line of the file: a git diff's hunk without context before its first change (`fileEdges.ts`). */
  readonly atStartOfFile?: boolean | undefined;
  /**
   * The edges `fileEdges.ts` inferred give way when the file no longer has them there (lines were
   * added beyond them), as GNU patch's fuzz lets a `diff -u` hunk move: unless its new side is in
   * the file already, the hunk then goes where its context is.
   */
  readonly edgesYield?: boolean | undefined;
  /**
   * Whether each side ends with a newline, when a `\ No newline at end of file` marker spoke: the
   * marked side lacks it, the other has it. The file must then end as `old` says, and ends as `new`
   * says. Absent: the patch says nothing, and the file keeps what it had.
   */
  readonly finalNewline?: FinalNewline | undefined;
}

export interface FinalNewline {
  readonly old: boolean;
  readonly new: boolean;
}

/** A text-level edit of one file, applied in order on the running content. */
export type TextEdit =
  | {
    readonly kind: 'replace';
    /** Text to find, and its replacement; both may span lines. */
    readonly search: string;
    readonly replace: string;
    readonly replaceAll?: boolean | undefined;
    /** Aider blocks: the search may match at another indentation, the replace shifted alike. */
    readonly relativeIndent?: boolean | undefined;
  }
  /** Insert `text` after 1-based line `line` (0 = at the top). */
  | { readonly kind: 'insert'; readonly line: number; readonly text: string };

/** A file's git blob ids before and after the change, from a git diff's `index` line (usually abbreviated). */
export interface BlobIds {
  readonly old: string;
  readonly new: string;
}

export type FilePatch =
  | { readonly op: 'add'; readonly path: string; readonly content: string }
  | { readonly op: 'update'; readonly path: string; readonly hunks: readonly Hunk[]; readonly blobs?: BlobIds | undefined }
  /**
   * `hunks` empty: delete whatever is there (codex, V4A), or with `mustBeEmpty` only an empty file
   * (a git delete without lines) or, given `blobs` naming content, the file that is their old blob.
   */
  | { readonly op: 'delete'; readonly path: string; readonly hunks: readonly Hunk[]; readonly mustBeEmpty?: boolean; readonly blobs?: BlobIds | undefined }
  | { readonly op: 'rename'; readonly fromPath: string; readonly path: string; readonly hunks: readonly Hunk[]; readonly blobs?: BlobIds | undefined }
  | { readonly op: 'edit'; readonly path: string; readonly edits: readonly TextEdit[] }
  /** Whole-file write; `mayReplace` only when the caller pinned the current content's hash. */
  | { readonly op: 'write'; readonly path: string; readonly content: string; readonly mayReplace: boolean };

/** One patch of a series (a mailbox of `git format-patch` mails): it applies to the result of the ones before. */
export interface SeriesPart {
  /** The mail's subject. */
  readonly title: string;
  /** How many entries of `ParsedPatch.files`, in order, this part holds. */
  readonly fileCount: number;
}

export interface ParsedPatch {
  readonly dialect: Dialect;
  readonly files: readonly FilePatch[];
  readonly diagnostics: readonly Diagnostic[];
  /** Metadata lines accepted but never executed (`index …`, `new file mode 100755`, …). */
  readonly ignoredMetadata: readonly string[];
  /**
   * Only with `PatchInput.probe`: the paths whose existence decides the strip level, or whether a
   * `mentionedDirectory` is where the patch applies. The patch was
   * parsed as if none existed; that parse stands when every `probeExpects` path exists. Otherwise
   * (or when `probeExpects` is absent and `files` empty) parse again with `existingPaths`.
   */
  readonly pathProbe?: readonly string[] | undefined;
  readonly probeExpects?: readonly string[] | undefined;
  /**
   * Set by a shell command's `cd <dir> &&` (or `git -C`, `patch -d`): the directory every path was
   * joined onto. It must be a directory in the workspace, as a shell stops at a failed `cd` and
   * never runs the patch command.
   */
  readonly workingDirectory?: string | undefined;
  /**
   * Set when the text before the patch names a `cd` without running it ("Run `cd build` first"):
   * that directory. The paths stay relative to the root, once the workspace showed the patch does
   * not apply there instead (directoryMention.ts).
   */
  readonly mentionedDirectory?: string | undefined;
  /** Set when the patch is a series of patches: `files` holds each part's files in turn; the same path may recur across parts. */
  readonly series?: readonly SeriesPart[] | undefined;
}

/** What the workspace found at a path the patch names. */
export type FileSnapshot =
  | { readonly kind: 'file'; readonly bytes: Uint8Array }
  | { readonly kind: 'missing' }
  | { readonly kind: 'directory' };

export type MatchTier = 'exact' | 'trailing_whitespace' | 'whitespace' | 'unicode' | 'relative_indent';

export interface HunkReport {
  readonly index: number;
  /** 1-based line of the original file where the hunk's old side starts (for a pure insertion: the line it goes before). */
  readonly line: number;
  readonly tier: MatchTier;
  /** `line` minus the hinted line; 0 without a hint. */
  readonly offset: number;
}

export interface PlannedFile {
  readonly op: 'add' | 'update' | 'delete' | 'rename';
  readonly path: string;
  readonly fromPath?: string | undefined;
  /** New bytes; null for a delete. */
  readonly after: Uint8Array | null;
  readonly hunks: readonly HunkReport[];
  /** Unified diff of the change, for the receipt. */
  readonly diff: string;
  readonly diagnostics: readonly Diagnostic[];
}

export interface Plan {
  readonly dialect: Dialect;
  readonly files: readonly PlannedFile[];
  readonly diagnostics: readonly Diagnostic[];
  readonly ignoredMetadata: readonly string[];
}

export interface PlanOptions {
  readonly fuzz?: 'default' | 'exact' | undefined;
}

/** The hunks of a file patch; none for adds, edits and writes. */
export function hunksOf(file: FilePatch): readonly Hunk[] {
  return 'hunks' in file ? file.hunks : [];
}
