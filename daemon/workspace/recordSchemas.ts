/**
 * The zod schemas that check journals and undo records read back from disk. Only the decode
 * paths (recovery, undo, log, history) load this module, lazily: writing a journal or a record
 * needs no zod, so a plain one-shot apply never loads it.
 */
import { z } from 'zod';
import type { JournalRecord, RedoRecord } from './journal.ts';
import type { RecordMeta } from './records.ts';

const OwnerSchema = z.object({ mode: z.number().int(), uid: z.number().int(), gid: z.number().int() });

const JournalEntrySchema = z.object({
  path: z.string(),
  tempName: z.string().nullable(),
  trashed: z.boolean(),
  before: z.object({
    offset: z.number().int().nonnegative(),
    length: z.number().int().nonnegative(),
    owner: OwnerSchema,
    // Optional: records written before patchd kept it have none.
    sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  }).nullable(),
  afterSha256: z.string().nullable(),
});

// The header line's checksum (`headerCrc32`) is checked by `decodeJournalHeader`; this strips it, as it does any key it does not name.
export const JournalRecordSchema: z.ZodType<JournalRecord> = z.object({
  format: z.literal(1),
  transactionId: z.string(),
  root: z.string(),
  startedAt: z.number(),
  entries: z.array(JournalEntrySchema),
  directories: z.array(z.string()),
  removedDirectories: z.array(z.string()).optional(),
  // Optional: journals written before patchd kept them have none.
  directoryOwners: z.array(z.object({ path: z.string(), owner: OwnerSchema })).optional(),
  meta: z.unknown().optional(),
});

const ByteRangeSchema = z.object({ offset: z.number().int().nonnegative(), length: z.number().int().nonnegative() });

export const RedoRecordSchema: z.ZodType<RedoRecord> = z.object({
  bootId: z.string().nullable(),
  after: z.array(ByteRangeSchema.nullable()),
});

const FileChangeSchema = z.object({
  path: z.string(),
  fromPath: z.string().optional(),
  op: z.enum(['add', 'update', 'delete', 'rename']),
});

export const RecordMetaSchema: z.ZodType<RecordMeta> = z.object({
  format: z.string(),
  files: z.array(FileChangeSchema),
  unit: z.number().int().nonnegative(),
  units: z.number().int().positive(),
  undoOf: z.string().optional(),
});
