/**
 * The contract's names and limits as plain data, with no imports: what the CLI and the
 * engine need at run time without loading zod or vscode-jsonrpc. The schemas build on these.
 */

/**
 * Every dialect name a receipt may report. `unified`: unified / git diff. `codex`: the
 * `*** Begin Patch` envelope. `v4a`: OpenAI V4A operations. `search-replace`: Aider
 * SEARCH/REPLACE blocks. `edits`: str_replace-style edits and whole-file writes. `shell`:
 * an `apply_patch <<EOF` heredoc.
 */
export const DIALECTS = ['unified', 'codex', 'v4a', 'search-replace', 'edits', 'shell'] as const;

/** A concrete dialect. */
export type Dialect = (typeof DIALECTS)[number];

/** Every `format` name `patch/apply` accepts besides `auto`; `initialize` reports exactly this list. */
export const FORMATS = DIALECTS;

/** Largest `strip` level accepted (`patch -pN`). */
export const MAX_STRIP = 64;

/** Most patches one batch may carry. */
export const MAX_BATCH_PATCHES = 10_000;
/** Most patches of a batch in flight at once. */
export const MAX_BATCH_CONCURRENCY = 64;
/** In flight at once when `concurrency` is not given. */
export const DEFAULT_BATCH_CONCURRENCY = 8;
