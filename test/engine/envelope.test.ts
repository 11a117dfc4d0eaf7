import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { parseEnvelope } from '../../daemon/engine/envelope.ts';
import { LIMITS } from '../../daemon/engine/limits.ts';
import { fromText, hunksOf, parserHarness } from '../helpers/parserHarness.ts';

const { parsed, rejected, onlyFile } = parserHarness(fromText(parseEnvelope));

/** A complete envelope around `lines`. */
function envelope(...lines: string[]): string {
  return ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
}

const replaceTwo = ['@@', '-two', '+TWO'];

// Add File

test('Add File: each + line becomes a line ending in \\n', () => {
  assert.deepEqual(onlyFile(envelope('*** Add File: bar.md', '+This is a new file', '+', '+last')), {
    op: 'add', path: 'bar.md', content: 'This is a new file\n\nlast\n',
  });
});

test('Add File with no + lines is an empty file, and the next section still parses', () => {
  const { files } = parsed(envelope('*** Add File: empty.txt', '*** Update File: keep.txt', '@@', '-k', '+K'));
  assert.deepEqual(files[0], { op: 'add', path: 'empty.txt', content: '' });
  assert.equal(files[1]?.op, 'update');
});

test('Add File: a trailing \\ No newline at end of file drops the final newline', () => {
  assert.deepEqual(onlyFile(envelope('*** Add File: a.txt', '+one', '+two', '\\ No newline at end of file')), {
    op: 'add', path: 'a.txt', content: 'one\ntwo',
  });
});

test('Add File: a line without + is a parse_error naming the patch line', () => {
  const error = rejected(envelope('*** Add File: a.txt', '+one', 'two'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 4/);
  assert.equal(error.path, 'a.txt');
});

test('Add File: an empty line between + lines is a parse_error; blank lines after the body are not', () => {
  assert.match(rejected(envelope('*** Add File: a.txt', '+one', '', '+three')).message, /patch line 4.*lone "\+"/);
  assert.equal(onlyFile(envelope('*** Add File: a.txt', '+one', '', '')).op, 'add');
});

test('Add File: + lines after \\ No newline at end of file are a parse_error', () => {
  assert.equal(rejected(envelope('*** Add File: a.txt', '+one', '\\ No newline at end of file', '+two')).code, 'parse_error');
});

// Update File and chunks

test('Update File: @@ chunk lines become context/remove/add lines; no oldStart, no anchors', () => {
  assert.deepEqual(onlyFile(envelope('*** Update File: lines.txt', '@@', ' line1', '-line2', '+changed', ' line3')), {
    op: 'update',
    path: 'lines.txt',
    hunks: [{
      anchors: [],
      lines: [{ kind: 'context', text: 'line1' }, { kind: 'remove', text: 'line2' }, { kind: 'add', text: 'changed' }, { kind: 'context', text: 'line3' }],
      atEndOfFile: false,
    }],
  });
});

test('several @@ lines start several chunks', () => {
  const hunks = hunksOf(onlyFile(envelope('*** Update File: multi.txt', '@@', '-line2', '+changed2', '@@', '-line4', '+changed4')));
  assert.deepEqual(hunks.map((hunk) => hunk.lines.map((line) => line.text)), [['line2', 'changed2'], ['line4', 'changed4']]);
});

test('@@ <text> is a binding anchor; only the separating space is dropped', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: f.py', '@@ def b():', '-    return 1', '+    return 2')));
  assert.deepEqual(hunk?.anchors, ['def b():']);
  const [indented] = hunksOf(onlyFile(envelope('*** Update File: f.py', '@@     def close(self):', '-        pass', '+        x')));
  assert.deepEqual(indented?.anchors, ['    def close(self):']);
});

test('consecutive @@ lines stack their anchors, outermost first', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: svc.py', '@@ class Writer:', '@@', '@@     def close(self):', '-        pass', '+        flush()')));
  assert.deepEqual(hunk?.anchors, ['class Writer:', '    def close(self):']);
});

test('a unified @@ -a,b +c,d @@ header starts a chunk but is no anchor', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: n.txt', '@@ -1,2 +1,2 @@ function f()', ' one', '-two', '+2')));
  assert.deepEqual(hunk?.anchors, []);
  assert.equal(hunk?.oldStart, undefined);
});

test('the first chunk of an Update may omit @@', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: m.py', ' import foo', '+import bar', ' x = 1')));
  assert.deepEqual(hunk?.lines.map((line) => line.kind), ['context', 'add', 'context']);
});

test('a completely empty line inside a chunk is an empty context line', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: g.txt', '@@', ' a', '', '-b', '+B')));
  assert.deepEqual(hunk?.lines[1], { kind: 'context', text: '' });
});

test('blank lines at the end of a chunk separate it from the next section, they are not context', () => {
  const { files } = parsed(envelope('*** Update File: a.txt', '@@', '-a', '+A', '', '', '*** Delete File: b.txt'));
  assert.deepEqual(hunksOf(files[0]!)[0]?.lines.length, 2);
  assert.equal(files[1]?.op, 'delete');
});

test('blank lines before the first chunk are skipped', () => {
  assert.equal(hunksOf(onlyFile(envelope('*** Update File: b.txt', '', '@@', '-l1', '+L1', '@@', '-l4', '+L4'))).length, 2);
});

test('*** End of File marks the chunk atEndOfFile', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: tail.txt', '@@', ' first', '-second', '+second updated', '*** End of File')));
  assert.equal(hunk?.atEndOfFile, true);
  assert.equal(hunk?.lines.length, 3);
});

test('after *** End of File a new chunk must start with @@', () => {
  const error = rejected(envelope('*** Update File: t.txt', '@@', '-a', '+A', '*** End of File', '-b', '+B'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 7.*@@/);
  assert.equal(error.hunkIndex, 1);
});

test('\\ No newline after a + line: the new side lacks the final newline, the old side has it; the chunk ends the file', () => {
  for (const end of [[], ['*** End of File']]) {
    const [hunk] = hunksOf(onlyFile(envelope('*** Update File: n.txt', '@@', '-last', '+LAST', '\\ No newline at end of file', ...end)));
    assert.deepEqual(hunk?.finalNewline, { old: true, new: false });
    assert.equal(hunk?.atEndOfFile, true);
  }
});

test('\\ No newline after the - line only: the old side lacks it, the new side has it', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: n.txt', '@@', '-last', '\\ No newline at end of file', '+LAST')));
  assert.deepEqual(hunk?.finalNewline, { old: false, new: true });
  assert.equal(hunk?.atEndOfFile, true);
});

test('\\ No newline on both sides, or after context: both sides lack it; no marker: nothing said', () => {
  const both = hunksOf(onlyFile(envelope('*** Update File: n.txt', '@@', '-a', '\\ No newline at end of file', '+b', '\\ No newline at end of file')))[0];
  assert.deepEqual(both?.finalNewline, { old: false, new: false });
  const context = hunksOf(onlyFile(envelope('*** Update File: n.txt', '@@', '-a', '+b', ' c', '\\ No newline at end of file')))[0];
  assert.deepEqual(context?.finalNewline, { old: false, new: false });
  assert.equal(context?.atEndOfFile, true);
  const unmarked = hunksOf(onlyFile(envelope('*** Update File: n.txt', '@@', '-a', '+b', '*** End of File')))[0];
  assert.equal(unmarked?.finalNewline, undefined);
});

test('a misplaced \\ No newline marker is a parse_error', () => {
  assert.equal(rejected(envelope('*** Update File: n.txt', '@@', '\\ No newline at end of file', '-a')).code, 'parse_error');
  assert.match(rejected(envelope('*** Update File: n.txt', '@@', ' a', '\\ No newline at end of file', ' b')).message, /patch line 6/);
});

test('CR that is content (not every line CRLF) is kept in the line text', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: c.txt', '@@', '-two\r', '+TWO\r')));
  assert.deepEqual(hunk?.lines.map((line) => line.text), ['two\r', 'TWO\r']);
});

test('inside a chunk, space-prefixed lines stay context even when they look like markers', () => {
  const [hunk] = hunksOf(onlyFile(envelope('*** Update File: doc.txt', '@@', ' *** End Patch', ' @@ x', '-*** Update File: y', '+z')));
  assert.deepEqual(hunk?.lines.map((line) => line.text), ['*** End Patch', '@@ x', '*** Update File: y', 'z']);
});

// Move, Delete

test('*** Move to: right after *** Update File: gives a rename with hunks', () => {
  assert.deepEqual(onlyFile(envelope('*** Update File: old/name.txt', '*** Move to: renamed/dir/name.txt', '@@', '-old', '+new')), {
    op: 'rename',
    fromPath: 'old/name.txt',
    path: 'renamed/dir/name.txt',
    hunks: [{ anchors: [], lines: [{ kind: 'remove', text: 'old' }, { kind: 'add', text: 'new' }], atEndOfFile: false }],
  });
});

test('*** Move to: anywhere else is a parse_error', () => {
  const error = rejected(envelope('*** Update File: a.txt', '@@', '-a', '+b', '*** Move to: b.txt'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 6.*right after/);
});

test('*** Delete File: gives a delete with no hunks', () => {
  assert.deepEqual(onlyFile(envelope('*** Delete File: obsolete.txt')), { op: 'delete', path: 'obsolete.txt', hunks: [] });
});

test('*** Delete File: followed by body lines is a parse_error', () => {
  assert.match(rejected(envelope('*** Delete File: a.txt', '-gone')).message, /patch line 3.*no body/);
});

test('*** Move File: a -> b gives a rename, with or without hunks', () => {
  assert.deepEqual(onlyFile(envelope('*** Move File: src/a.ts -> src/b.ts')), { op: 'rename', fromPath: 'src/a.ts', path: 'src/b.ts', hunks: [] });
  const moved = onlyFile(envelope('*** Move File: a.ts -> b.ts', '@@', '-x', '+y'));
  assert.equal(hunksOf(moved).length, 1);
});

test('a move onto itself, or a Move File without ->, is a parse_error', () => {
  assert.equal(rejected(envelope('*** Move File: a.txt -> ./a.txt')).code, 'parse_error');
  assert.equal(rejected(envelope('*** Update File: a.txt', '*** Move to: a.txt', '@@', '-a', '+b')).code, 'parse_error');
  assert.match(rejected(envelope('*** Move File: a.txt b.txt')).message, /->/);
});

// Envelope leniencies

for (const opener of ["<<'EOF'", '<<EOF', '<<"EOF"', "apply_patch <<'EOF'"]) {
  test(`a heredoc wrapper (${opener} … EOF) is stripped without a diagnostic`, () => {
    const patch = parsed(`${opener}\n${envelope('*** Update File: a.txt', ...replaceTwo)}EOF\n`);
    assert.equal(patch.files.length, 1);
    assert.deepEqual(patch.diagnostics, []);
  });
}

test('text around a complete envelope is ignored and reported as text_around_patch', () => {
  const mismatchedHeredoc = parsed(`<<"EOF'\n${envelope('*** Update File: a.txt', ...replaceTwo)}EOF\n`);
  assert.equal(mismatchedHeredoc.files.length, 1);
  assert.deepEqual(mismatchedHeredoc.diagnostics.map((diagnostic) => diagnostic.code), ['text_around_patch']);
  const prose = parsed(`Here is the patch:\n\`\`\`\n${envelope('*** Delete File: a.txt')}\`\`\`\n`);
  assert.deepEqual(prose.diagnostics.map((diagnostic) => diagnostic.code), ['text_around_patch']);
});

test('whitespace-padded markers and headers are accepted', () => {
  const patch = parsed([' *** Begin Patch  ', '  *** Update File: foo.txt  ', '  @@ anchor', '-old', '+new', '@@  ', '-x', '+y', ' *** End Patch ', ''].join('\n'));
  const [file] = patch.files;
  assert.equal(file?.path, 'foo.txt');
  assert.deepEqual(hunksOf(file!).map((hunk) => hunk.anchors), [['anchor'], []]);
});

test('prose and fences before and after one complete envelope are ignored; a padded real end marker still ends it', () => {
  for (const text of [
    `Here is the patch:\n\n${envelope('*** Update File: a.txt', ...replaceTwo)}\nThis changes two to TWO.\n- one bullet\n`,
    `\`\`\`\n${envelope('*** Update File: a.txt', ...replaceTwo)}\`\`\`\n- it changes a.txt\n`,
    ['*** Begin Patch', '*** Update File: a.txt', ...replaceTwo, ' *** End Patch', '', 'Done: cd is fine in prose after the patch.', ''].join('\n'),
    ['*** Begin Patch', '*** Update File: a.txt', ...replaceTwo, '*** End Patch  ', '```', ''].join('\n'),
  ]) {
    const patch = parsed(text);
    assert.deepEqual(hunksOf(onlyFile(text)).map((hunk) => hunk.lines.length), [2], text);
    assert.deepEqual(patch.diagnostics.map((diagnostic) => diagnostic.code), ['text_around_patch'], text);
  }
});

test('a second envelope after a complete one, cut off or not, is a parse_error: never the first applied alone', () => {
  const second = ['*** Begin Patch', '*** Update File: g.txt', '@@', '-b', '+B'];
  const cut = `${envelope('*** Update File: f.txt', '@@', '-a', '+A')}\nAnd the second file:\n\n${second.join('\n')}\n`;
  const error = rejected(cut);
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 10 \("\*\*\* Begin Patch"\) comes after the \*\*\* End Patch on patch line 6/);
  assert.equal(rejected(`${cut}*** End Patch\n`).code, 'parse_error', 'both complete');
});

test('file sections, @@ chunks or diff headers outside the envelope are a parse_error, before it or after it', () => {
  const body = envelope('*** Update File: f.txt', '@@', '-a', '+A');
  for (const outside of ['*** Update File: g.txt', '  *** Add File: h.txt', '*** Delete File: g.txt', '*** Move to: z.txt', '*** End of File', '@@', '  @@ def g():', '--- a/g.txt\n+++ b/g.txt', '<<<<<<< SEARCH']) {
    assert.equal(rejected(`${body}\nAlso:\n${outside}\n-b\n+B\n`).code, 'parse_error', `after: ${outside}`);
    if (!outside.startsWith('*** End of File')) assert.equal(rejected(`${outside}\n-b\n+B\n\n${body}`).code, 'parse_error', `before: ${outside}`);
  }
});

test('chunk lines right after *** End Patch are a parse_error: " *** End Patch" may be a context line, the rest its chunk', () => {
  const cut = ['*** Begin Patch', '*** Update File: doc.md', '@@', '-Example:', '+Sample:', ' *** End Patch', '-old', '+new', ''].join('\n');
  const error = rejected(cut);
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 7 \("-old"\) looks like a chunk line, yet comes after the \*\*\* End Patch on patch line 6/);
  assert.match(error.message, /is also a context line/);
  for (const after of ['\n-old', ' old', '+new', '\\ No newline at end of file', ' EOF']) {
    assert.equal(rejected(['*** Begin Patch', '*** Update File: doc.md', '@@', '-a', '+b', '*** End Patch', after, ''].join('\n')).code, 'parse_error', after);
  }
  // With its own end marker after it, the padded line is the context line it looks like.
  const whole = onlyFile(cut.replace(/\n$/, '\n*** End Patch\n'));
  assert.deepEqual(hunksOf(whole)[0]!.lines.map((line) => `${line.kind}:${line.text}`), ['remove:Example:', 'add:Sample:', 'context:*** End Patch', 'remove:old', 'add:new']);
});

test('the dialect is codex and there is no ignored metadata', () => {
  const patch = parsed(envelope('*** Delete File: a.txt'));
  assert.equal(patch.dialect, 'codex');
  assert.deepEqual(patch.ignoredMetadata, []);
});

// Errors

test('a missing *** End Patch is a parse_error: the patch may be truncated', () => {
  const error = rejected(['*** Begin Patch', '*** Update File: a.txt', ...replaceTwo, ''].join('\n'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /truncated/);
});

test('no *** Begin Patch, or an empty patch, is a parse_error', () => {
  assert.match(rejected('*** Update File: a.txt\n@@\n-a\n+b\n').message, /Begin Patch/);
  assert.equal(parseEnvelope([]).ok, false);
  assert.match(rejected('\n\n').message, /empty/);
});

test('an envelope with no file sections is a parse_error', () => {
  assert.match(rejected(envelope()).message, /no file sections/);
});

test('an Update with no chunks is a parse_error', () => {
  const error = rejected(envelope('*** Update File: foo.txt'));
  assert.equal(error.code, 'parse_error');
  assert.equal(error.path, 'foo.txt');
  assert.match(error.message, /patch line 2.*no chunks/);
});

test('an empty chunk is a parse_error', () => {
  const error = rejected(envelope('*** Update File: foo.txt', '@@', '-a', '+b', '@@ anchor', '*** Delete File: x.txt'));
  assert.equal(error.code, 'parse_error');
  assert.equal(error.hunkIndex, 1);
  assert.match(error.message, /patch line 6/);
});

test('an unknown *** directive is a parse_error naming the patch line', () => {
  const error = rejected(envelope('*** Frobnicate File: foo'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 2/);
});

test('an unknown *** directive after a chunk, or a second envelope, is a parse_error naming the line', () => {
  assert.match(rejected(envelope('*** Update File: a.txt', ...replaceTwo, '*** Frobnicate')).message, /patch line 6 \("\*\*\* Frobnicate"\)/);
  const twoEnvelopes = `${envelope('*** Delete File: a.txt')}${envelope('*** Delete File: b.txt')}`;
  assert.match(rejected(twoEnvelopes).message, /patch line 3.*one \*\*\* Begin Patch/);
});

test('an invalid line inside a chunk is a parse_error naming the line, the file and the chunk', () => {
  const error = rejected(envelope('*** Update File: n.txt', '@@', ' one', '#two', '+2'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /patch line 5 \("#two"\)/);
  assert.equal(error.path, 'n.txt');
  assert.equal(error.hunkIndex, 0);
  assert.ok(error.hint.length > 0);
});

test('paths that leave the workspace are path_escape (Add, Update, Move to, Move File)', () => {
  assert.equal(rejected(envelope('*** Add File: ../outside.txt', '+x')).code, 'path_escape');
  assert.equal(rejected(envelope('*** Update File: /etc/passwd', ...replaceTwo)).code, 'path_escape');
  assert.equal(rejected(envelope('*** Update File: a.txt', '*** Move to: ../moved.txt', ...replaceTwo)).code, 'path_escape');
  assert.equal(rejected(envelope('*** Move File: a.txt -> sub/../../b.txt')).code, 'path_escape');
});

test('paths are normalised', () => {
  assert.equal(onlyFile(envelope('*** Delete File: ./src//a.txt')).path, 'src/a.txt');
});

test('the same path in two sections is duplicate_file_patch', () => {
  const error = rejected(envelope('*** Update File: a.txt', ...replaceTwo, '*** Delete File: ./a.txt'));
  assert.equal(error.code, 'duplicate_file_patch');
  assert.equal(error.path, 'a.txt');
  assert.equal(rejected(envelope('*** Move File: a.txt -> b.txt', '*** Add File: b.txt', '+x')).code, 'duplicate_file_patch');
});

test(`more than ${LIMITS.maxFiles} file sections is limit_exceeded`, () => {
  const sections = Array.from({ length: LIMITS.maxFiles + 1 }, (_, index) => `*** Delete File: f${index}.txt`);
  const error = rejected(envelope(...sections));
  assert.equal(error.code, 'limit_exceeded');
  assert.deepEqual(error.limit, { name: 'maxFiles', max: LIMITS.maxFiles, actual: LIMITS.maxFiles + 1 });
});

test(`more than ${LIMITS.maxHunks} hunks is limit_exceeded`, () => {
  const chunks = Array.from({ length: LIMITS.maxHunks + 1 }, (_, index) => ['@@', `-a${index}`, `+b${index}`]).flat();
  const error = rejected(envelope('*** Update File: big.txt', ...chunks));
  assert.equal(error.code, 'limit_exceeded');
  assert.equal(error.limit?.name, 'maxHunks');
  assert.equal(error.limit?.max, LIMITS.maxHunks);
});

test('never throws, whatever the lines', () => {
  const line = fc.oneof(
    fc.constantFrom('*** Begin Patch', '*** End Patch', '*** Add File: a', '*** Update File: a', '*** Delete File: b', '*** Move to: c',
      '*** Move File: a -> d', '*** End of File', '@@', '@@ x', '\\ No newline at end of file', '', ' ', '<<EOF', 'EOF'),
    fc.tuple(fc.constantFrom(' ', '+', '-', '@', '*', '\\', '  *** '), fc.string({ maxLength: 6 })).map(([prefix, text]) => prefix + text),
  );
  fc.assert(fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
    const result = parseEnvelope(lines);
    assert.equal(typeof result.ok, 'boolean');
  }), { numRuns: 2000 });
});
