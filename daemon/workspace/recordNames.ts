/**
 * Undo record file names read back (`records.ts` writes them): `<commit time, ms, 13 digits>-<pid>.<process
 * nonce>-<sequence>-<transactionId>.<unit>.record`, or without `.<nonce>` as written before patchd named
 * the process. Apart from `records.ts`, so the journal names that carry a record name
 * (`journal.ts`) are read by the same rule without importing the record store.
 */

/** Time, pid, nonce (absent from older names), sequence, transaction id, unit. */
const RECORD_NAME = /^(\d{13})-(\d+)(?:\.([0-9a-f]+))?-(\d+)-([A-Za-z0-9_-]+)\.(\d+)\.record$/;

/** A record name's parts, as written (digits kept as text: the time's leading zeros belong to its key). */
export interface RecordNameParts {
  readonly at: string;
  readonly pid: string;
  readonly nonce?: string | undefined;
  readonly sequence: string;
  readonly transactionId: string;
  readonly unit: string;
}

/** The parts of the record file name `name`; undefined when it is not one. */
export function parseRecordName(name: string): RecordNameParts | undefined {
  const match = RECORD_NAME.exec(name);
  if (match === null) return undefined;
  const [, at, pid, nonce, sequence, transactionId, unit] = match as unknown as [string, string, string, string | undefined, string, string, string];
  return { at, pid, nonce, sequence, transactionId, unit };
}
