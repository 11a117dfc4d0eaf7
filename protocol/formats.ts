/** Names of the patch dialects and of the matching tiers, shared by requests and receipts. */
import { z } from 'zod';
import { DIALECTS, FORMATS } from './constants.ts';

export { DIALECTS, FORMATS, type Dialect } from './constants.ts';

/** Validates a requested `format`: `auto` (detect the dialect, the default) or one of {@link FORMATS}. */
export const FormatNameSchema = z.enum(['auto', ...FORMATS]);

/** A requested `format` name. */
export type FormatName = z.infer<typeof FormatNameSchema>;

/** Validates a receipt's `format`: the dialect read, the requested name when parsing failed, or `undo` (`patch/undo`). */
export const ReceiptFormatSchema = z.enum(['auto', ...DIALECTS, 'undo']);

/** A receipt's `format`. */
export type ReceiptFormat = z.infer<typeof ReceiptFormatSchema>;

/**
 * How tolerant the match of a hunk had to be, tried in this order: `exact`, trailing
 * whitespace ignored, leading and trailing whitespace ignored, Unicode punctuation folded;
 * `relative_indent` for SEARCH/REPLACE blocks and str_replace edits matched with their
 * indentation shifted, their new lines shifted alike.
 */
export const MatchTierSchema = z.enum(['exact', 'trailing_whitespace', 'whitespace', 'unicode', 'relative_indent']);

/** A matching tier. */
export type MatchTier = z.infer<typeof MatchTierSchema>;
