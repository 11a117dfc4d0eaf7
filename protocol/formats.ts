/** Names of the patch dialects and of the matching tiers, shared by requests and receipts. */
import { z } from 'zod';

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

/** Validates a requested `format`: `auto` (detect the dialect, the default) or one of {@link FORMATS}. */
export const FormatNameSchema = z.enum(['auto', ...FORMATS]);

/** A requested `format` name. */
export type FormatName = z.infer<typeof FormatNameSchema>;

/** Validates a receipt's `format`: the dialect read, or the requested name when parsing failed. */
export const ReceiptFormatSchema = z.enum(['auto', ...DIALECTS]);

/** A receipt's `format`. */
export type ReceiptFormat = z.infer<typeof ReceiptFormatSchema>;

/**
 * How tolerant the match of a hunk had to be, tried in this order: `exact`, trailing
 * whitespace ignored, leading and trailing whitespace ignored, Unicode punctuation folded;
 * `relative_indent` for SEARCH/REPLACE blocks matched with their indentation shifted.
 */
export const MatchTierSchema = z.enum(['exact', 'trailing_whitespace', 'whitespace', 'unicode', 'relative_indent']);

/** A matching tier. */
export type MatchTier = z.infer<typeof MatchTierSchema>;
