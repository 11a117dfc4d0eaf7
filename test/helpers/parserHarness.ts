/** The assertions every parser test needs, around one parser. */
import assert from 'node:assert/strict';
import type { EngineError } from '../../daemon/engine/errors.ts';
import { splitPatchLines } from '../../daemon/engine/patchText.ts';
import type { FilePatch, Hunk, ParsedPatch, Result } from '../../daemon/engine/types.ts';

export interface ParserHarness<Input extends unknown[]> {
  readonly parse: (...input: Input) => Result<ParsedPatch>;
  /** The parse result, failing the test on a rejection. */
  readonly parsed: (...input: Input) => ParsedPatch;
  /** The error, failing the test when the input parses. */
  readonly rejected: (...input: Input) => EngineError;
  /** The one file the input names. */
  readonly onlyFile: (...input: Input) => FilePatch;
}

export function parserHarness<Input extends unknown[]>(parse: (...input: Input) => Result<ParsedPatch>): ParserHarness<Input> {
  const parsed = (...input: Input): ParsedPatch => {
    const result = parse(...input);
    if (!result.ok) assert.fail(`unexpected ${result.error.code}: ${result.error.message}`);
    return result.value;
  };
  const rejected = (...input: Input): EngineError => {
    const result = parse(...input);
    if (result.ok) assert.fail('expected a rejection, but the input parsed');
    return result.error;
  };
  const onlyFile = (...input: Input): FilePatch => {
    const { files } = parsed(...input);
    assert.equal(files.length, 1);
    return files[0]!;
  };
  return { parse, parsed, rejected, onlyFile };
}

/** A parser of patch lines as one of patch text, split the way `parsePatch` splits it. */
export function fromText(parseLines: (lines: readonly string[]) => Result<ParsedPatch>): (text: string) => Result<ParsedPatch> {
  return (text) => {
    const split = splitPatchLines(text);
    if (!split.ok) assert.fail(split.error.message);
    return parseLines(split.value.lines);
  };
}

export function hunksOf(file: FilePatch): readonly Hunk[] {
  assert.ok('hunks' in file, `a ${file.op} has no hunks`);
  return file.hunks;
}
