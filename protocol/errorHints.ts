/**
 * The error codes of a rejected patch, each with a one-line recovery hint written for a model.
 * Plain data with no imports, so the pure engine and the wire contract share one table.
 */
/** Every receipt error code with its hint. */
export const ERROR_HINTS = {
  parse_error: 'The patch is malformed. Resend it whole, in one dialect: a unified diff, a *** Begin Patch … *** End Patch envelope, or SEARCH/REPLACE blocks.',
  missing_file_header: 'Every hunk needs a file header first: `--- a/path` then `+++ b/path` (or a `diff --git` line).',
  invalid_hunk_header: 'Hunk headers look like `@@ -old_start,old_count +new_start,new_count @@`; fix or drop the numbers.',
  unsupported_git_patch_feature: 'Binary, copy, submodule and symbolic-link patches are not supported; send text changes only.',
  path_escape: 'Use a relative path inside the workspace, without `..` segments that leave it or an absolute path.',
  rename_path_mismatch: 'The `diff --git`, `rename from/to` and `---`/`+++` paths must name the same two files.',
  duplicate_file_patch: 'Each file may appear in one file section only; merge its hunks into a single section.',
  context_not_found: 'The context or removed lines are not in the file. Re-read the file and resend the hunk with its current text.',
  ambiguous_context: 'The context matches in several places. Add more surrounding lines (or an @@ anchor) so it matches once.',
  overlapping_edits: 'Two hunks change the same lines. Merge them into one hunk.',
  already_applied: 'The change is already there (its new side is present, its old side is not): it was applied before, or it is reversed. Skip it, or apply it reversed (-R) if old and new were swapped.',
  is_directory: 'That path names a directory; patches add, change and delete files, and read_file reads files. Name a file (a path without a trailing `/`).',
  already_exists: 'The file already exists. Update it instead of adding it, or move it to a path that is free.',
  not_found: 'No file is at that path. Check the path, or add the file instead of updating it.',
  stale_file: 'The file changed since you read it. Re-read it and rebuild the patch against its current content.',
  binary_file: 'The file is binary or not UTF-8 text; patchd does not edit it.',
  precondition_required: 'Replacing a whole file needs expectedSha256 of its current content (from file/read); otherwise edit it.',
  unsupported_command: 'Only `apply_patch`, `git apply` or `patch -p<n>` reading a heredoc is run (in a directory given by `cd <dir> &&`, `git -C` or `patch -d`); send the patch itself, every path from the workspace root.',
  limit_exceeded: 'The patch is larger than patchd accepts. Split it into smaller patches.',
  permission_denied: 'That path may not be written (for example inside .git/). Choose a path in the working tree.',
  timeout: 'Applying the patch took too long and was stopped. Send a smaller patch or more specific context.',
  busy: 'The workspace is busy. Retry shortly.',
  not_reversible: 'Only a change that shows both sides can be applied in reverse; send the inverse patch itself.',
  declined: 'The user declined the patch (or did not answer in time). Ask what they want changed before sending another.',
  unknown_transaction: 'No committed transaction of this workspace has that id (or it is past retention); list them with transaction/list.',
  io_error: 'The filesystem refused the change. Nothing was written; check the path and retry.',
  rollback_incomplete: 'The commit failed and so did rolling it back: some files may still hold this patch\'s content. patchd finishes the rollback the next time it opens this workspace (once every client closed it, or on restart); re-read files before patching them again.',
  internal_error: 'patchd hit an internal fault (a bug); please report it with the daemon log. The receipt lists what is known to be written.',
} as const;
