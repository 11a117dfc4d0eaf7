import assert from 'node:assert/strict';
import test from 'node:test';
import { allLines, assemble, decodeText, endingNear, indexText, lineAt, lineEnding, TextWriter, type Piece, type TextFile } from '../../daemon/engine/text.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const shape = (text: string) => {
  const file = indexText(text);
  return { eol: file.eol, lines: allLines(file), finalNewline: file.finalNewline };
};

test('LF text keeps its final newline state', () => {
  assert.deepEqual(shape('a\nb\n'), { eol: '\n', lines: ['a', 'b'], finalNewline: true });
  assert.deepEqual(shape('a\nb'), { eol: '\n', lines: ['a', 'b'], finalNewline: false });
});

test('an empty file counts as ending with a newline', () => {
  assert.deepEqual(shape(''), { eol: '\n', lines: [], finalNewline: true });
});

test('each line keeps its own ending; the file\'s own ending is the one most breaks use', () => {
  assert.deepEqual(shape('a\r\nb\r\n'), { eol: '\r\n', lines: ['a', 'b'], finalNewline: true });
  assert.deepEqual(shape('a\r\nb\r\nc\n').eol, '\r\n');
  assert.deepEqual(shape('a\r\nb\nc\n').eol, '\n');
  const file = indexText('a\r\nb\nc\r\r\nd\re\r');
  assert.deepEqual(Array.from(file.starts, (_, index) => lineEnding(file, index)), ['\r\n', '\n', '\r\n', '']);
  assert.deepEqual(allLines(file), ['a', 'b', 'c\r', 'd\re\r'], 'a CR not before LF is content');
  assert.deepEqual(allLines(file, 'raw'), ['a\r', 'b', 'c\r\r', 'd\re\r']);
  assert.equal(file.crlfCount, 2);
});

test('lineAt and allLines agree in both views, blank lines and a missing final newline included', () => {
  for (const text of ['a\n\nb', '\n\n', 'x\r\n\r\ny\r\n', 'only', 'a\r\nb\n\r\n', '\r\n', 'x\r', 'a\r\nb\r']) {
    const file = indexText(text);
    for (const view of ['content', 'raw'] as const) {
      assert.deepEqual(Array.from(file.starts, (_, index) => lineAt(file, index, view)), allLines(file, view), `${JSON.stringify(text)} ${view}`);
    }
  }
});

test('endingNear: the line\'s own ending, else the one before it, else the file\'s', () => {
  const file = indexText('a\nb\r\nc');
  assert.deepEqual([0, 1, 2, 3].map((index) => endingNear(file, index)), ['\n', '\r\n', '\r\n', '\n']);
  assert.equal(endingNear(indexText(''), 0), '\n');
});

const text = (file: TextFile, pieces: readonly Piece[]) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(assemble(file, pieces));

test('decode then encode is byte-exact for LF, CRLF, BOM, mixed, lone CRs and no final newline', () => {
  for (const source of ['a\nb\n', 'a\r\nb\r\n', 'a\r\nb', '\uFEFFx\ny\n', 'a\r\nb\nc', '\n\n', 'x', 'a\rb\r\n', 'x\r']) {
    const decoded = decodeText(bytes(source), 'f');
    assert.ok(decoded.ok);
    const writer = new TextWriter(decoded.value);
    writer.copy(0, decoded.value.starts.length);
    assert.equal(text(decoded.value, writer.finish(decoded.value.finalNewline)), source);
  }
});

test('TextWriter: old lines keep their bytes, added lines their chosen ending, the final newline is exact', () => {
  const file = indexText('a\r\nb\nc');
  const written = (finalNewline: boolean, build: (writer: TextWriter) => void) => {
    const writer = new TextWriter(file);
    build(writer);
    return text(file, writer.finish(finalNewline));
  };
  assert.equal(written(false, (w) => { w.copy(0, 3); w.add('d', '\r\n'); }), 'a\r\nb\nc\nd', 'the unterminated last line takes the file\'s ending');
  assert.equal(written(true, (w) => w.copy(0, 3)), 'a\r\nb\nc\n');
  assert.equal(written(false, (w) => w.copy(0, 1)), 'a', 'dropping an old line\'s ending drops its CRLF');
  assert.equal(written(false, (w) => { w.copy(0, 1); w.add('x\r', '\n'); }), 'a\r\nx\r', 'dropping an added line\'s ending drops what was added');
  assert.equal(written(true, (w) => { w.add('x', '\r\n'); w.copy(1, 2); w.copy(2, 3); }), 'x\r\nb\nc\n');
  assert.equal(written(true, () => undefined), '');
});

test('assemble gives the same bytes on the ASCII fast path and the string path', () => {
  for (const source of ['a\nb\nc', '\uFEFFa\r\nb\r\n', 'é\nb\nc\n', 'x\ny', 'a\r\nb\nc\r']) {
    const decoded = decodeText(bytes(source), 'f');
    assert.ok(decoded.ok);
    const viaString = { ...decoded.value, asciiBytes: undefined };
    const pieces: Piece[] = [{ from: 1, to: decoded.value.starts.length }, `new${decoded.value.eol}`, { from: 0, to: 1 }];
    assert.deepEqual(assemble(decoded.value, pieces), assemble(viaString, pieces));
  }
});

test('a BOM is remembered and kept out of the lines', () => {
  const decoded = decodeText(bytes('\uFEFFhello\n'), 'f');
  assert.ok(decoded.ok);
  assert.equal(decoded.value.bom, true);
  assert.deepEqual(allLines(decoded.value), ['hello']);
});

test('NUL bytes and invalid UTF-8 are binary_file', () => {
  for (const raw of [new Uint8Array([104, 0, 105]), new Uint8Array([0xff, 0xfe, 0x41])]) {
    const decoded = decodeText(raw, 'blob.bin');
    assert.ok(!decoded.ok);
    assert.equal(decoded.error.code, 'binary_file');
    assert.equal(decoded.error.path, 'blob.bin');
  }
});
