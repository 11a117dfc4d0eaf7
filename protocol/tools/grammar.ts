/**
 * The Lark grammar of the unified diff subset a model should emit as the body of `apply_patch`
 * (the OpenAI custom tool constrains decoding with it). It describes a bare diff — no prose, no
 * code fences (patchd tolerates both, a constrained model never needs them) — whose every line
 * ends in a newline (LF, or CRLF):
 *
 * - file patches: `--- path` + `+++ path` + hunks; or a `diff --git` line, its extended header
 *   lines (`index`, `similarity index`, `dissimilarity index`, `new file mode`,
 *   `deleted file mode`, `old mode`, `new mode`, `rename from`, `rename to`) and optionally
 *   `---`/`+++` + hunks (a pure rename, mode change or empty file has none);
 * - hunk headers `@@ -a[,b] +c[,d] @@ [text]`, or without numbers: `@@`, `@@ @@ [text]`,
 *   `@@ ... @@ [text]` (patchd locates hunks by their context);
 * - hunk lines: context (` `), removed (`-`), added (`+`), `\ No newline at end of file`, and an
 *   empty line (a blank context line whose space was lost).
 *
 * Out of the subset, so refused by the grammar: binary patches, copy headers, combined-diff
 * (`@@@`) and malformed hunk headers, hunks without a file header, and every other dialect.
 * Paths are free text here; the daemon checks they stay inside the workspace. It is LALR(1):
 * lines are single terminals, so it also parses fast with Lark's `lalr` parser.
 */
export const UNIFIED_DIFF_LARK_GRAMMAR = String.raw`start: file_patch+

file_patch: git_header extended_line* (file_header hunk+)?
          | file_header hunk+

git_header: "diff --git " PATH LF
extended_line: EXTENDED_KEY PATH LF
file_header: "--- " PATH LF "+++ " PATH LF

hunk: hunk_header hunk_line+
hunk_header: "@@ -" RANGE " +" RANGE " @@" TEXT? LF
           | "@@" LF
           | "@@ @@" TEXT? LF
           | "@@ ... @@" TEXT? LF
hunk_line: CONTEXT_LINE | REMOVED_LINE | ADDED_LINE | NO_NEWLINE_MARKER | LF

EXTENDED_KEY: "index " | "similarity index " | "dissimilarity index " | "new file mode " | "deleted file mode " | "old mode " | "new mode " | "rename from " | "rename to "
CONTEXT_LINE: / [^\n]*\n/
REMOVED_LINE: /-[^\n]*\n/
ADDED_LINE: /\+[^\n]*\n/
NO_NEWLINE_MARKER: /\\ No newline at end of file\r?\n/
RANGE: /[0-9]+(,[0-9]+)?/
PATH: /[^\n]+/
TEXT: /[^\n]+/
LF: /\r?\n/
`;
