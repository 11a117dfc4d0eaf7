/** Typed engine errors: data, never thrown. Each code carries a one-line hint written for a model. */

// The table is part of the wire contract; it is the one import the engine takes from outside itself.
import { ERROR_HINTS } from '../../protocol/errorHints.ts';
import { LIMITS } from './limits.ts';

export { ERROR_HINTS };

export type ErrorCode = keyof typeof ERROR_HINTS;

export const ERROR_CODES = Object.keys(ERROR_HINTS) as ErrorCode[];

/** The region of the file closest to context that was not found. */
export interface NearestRegion {
  /** 1-based line where the region starts. */
  readonly line: number;
  readonly text: string;
  /** 0..1, share of the hunk's old lines that matched there. */
  readonly similarity: number;
}

export interface LimitInfo {
  readonly name: string;
  readonly max: number;
  readonly actual: number;
}

export interface EngineError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint: string;
  readonly path?: string | undefined;
  readonly hunkIndex?: number | undefined;
  readonly nearest?: NearestRegion | undefined;
  readonly limit?: LimitInfo | undefined;
}

export interface ErrorDetails {
  readonly path?: string | undefined;
  readonly hunkIndex?: number | undefined;
  readonly nearest?: NearestRegion | undefined;
  readonly limit?: LimitInfo | undefined;
}

/**
 * The error, with its hint. A `path` longer than `maxPathChars` is left out: no receipt can carry
 * it (the protocol bounds receipt paths), and only a name the patch spells, before
 * `normalizePatchPath` refuses it, can be that long.
 */
export function engineError(code: ErrorCode, message: string, details: ErrorDetails = {}): EngineError {
  const error: { -readonly [K in keyof EngineError]: EngineError[K] } = { code, message, hint: ERROR_HINTS[code] };
  if (details.path !== undefined && details.path.length <= LIMITS.maxPathChars) error.path = details.path;
  if (details.hunkIndex !== undefined) error.hunkIndex = details.hunkIndex;
  if (details.nearest !== undefined) error.nearest = details.nearest;
  if (details.limit !== undefined) error.limit = details.limit;
  return error;
}

/** `already_applied` for `path` (and hunk), `why` saying what shows it. */
export function alreadyThere(path: string, why: string, hunkIndex?: number): EngineError {
  return engineError('already_applied', `${why} The patch was applied before, or it is reversed (made with old and new swapped); nothing was written.`, { path, hunkIndex });
}
