/**
 * Prompt guidance for `apply_patch` (RFC 002): one patch language — unified diff — whatever the
 * provider's outer tool shape. Anthropic and OpenAI function tools carry the diff in
 * `{"patch": "..."}`; the OpenAI custom tool takes the diff body itself.
 */

const EXAMPLE = '--- a/src/main.py\n+++ b/src/main.py\n@@ -1,2 +1,2 @@\n def main():\n-    old_call()\n+    new_call()\n';

const FORMAT = [
  'Use the apply_patch tool for every file change. Do not edit files through the shell.',
  'The patch is unified diff text, as `git diff` prints it. Do not use the `*** Begin Patch` / `*** Update File:` format.',
  '- Each file starts with `--- a/<path>` and `+++ b/<path>`, paths relative to the workspace root. A new file has `--- /dev/null`; a deleted file has `+++ /dev/null`. A rename is `diff --git a/<old> b/<new>`, `rename from <old>`, `rename to <new>`, then the hunks if its content changes too.',
  '- Each hunk starts with `@@ -<old_start>,<old_count> +<new_start>,<new_count> @@`, followed by its lines: " " (space) for unchanged context, "-" for a removed line, "+" for an added line, each followed by the line exactly as in the file.',
  '- Give about three unchanged lines of context around every change, copied exactly from the current file. The line numbers are hints: the context decides where a hunk goes.',
  '- Put all changes to one file in one section, hunks in file order. Several files may go in one patch; it applies all of them or none.',
];

const ON_REJECTION =
  'If the tool rejects the patch, its result names the rule that failed (a code and a hint) and the nearest text it found: re-read that part of the file and send a corrected patch. Nothing was written.';

function guidance(howToCall: string): string {
  return [...FORMAT, howToCall, ON_REJECTION].join('\n') + '\n';
}

/** For Anthropic Messages tools and OpenAI function tools: the diff inside `{"patch": "..."}`. */
export const JSON_TOOL_GUIDANCE = guidance(`Call apply_patch with a JSON object holding the diff as one string, for example:\n${JSON.stringify({ patch: EXAMPLE })}`);

/** For the OpenAI Responses custom (grammar) tool: the diff body itself. */
export const CUSTOM_TOOL_GUIDANCE = guidance(`Emit the diff itself as the apply_patch input: no JSON, no code fences, no prose. For example:\n${EXAMPLE}`);
