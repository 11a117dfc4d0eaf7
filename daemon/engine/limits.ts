/** Hard limits on what the engine accepts. Exceeding one is `limit_exceeded`, naming the limit. */
export const LIMITS = {
  /** Patch text, in UTF-16 code units (≈ bytes for ASCII). */
  maxPatchChars: 16 * 1024 * 1024,
  /** One line of patch text. */
  maxLineChars: 256 * 1024,
  /** Files named by one patch. */
  maxFiles: 2_000,
  /** Hunks in one patch, over all files. */
  maxHunks: 20_000,
  /** A file the patch reads or writes. */
  maxFileBytes: 64 * 1024 * 1024,
  /** V4A operations in one call. */
  maxOperations: 2_000,
  /**
   * A file path a patch names, once normalised, in UTF-16 code units. Mirrors `MAX_PATH_CHARS` in
   * protocol/workspace.ts (the engine imports nothing but the error table from outside itself;
   * test/server/protocolParity.test.ts keeps them equal): a longer path could not be named in a
   * receipt, whose paths the protocol bounds by it.
   */
  maxPathChars: 4_096,
} as const;

export type LimitName = keyof typeof LIMITS;
