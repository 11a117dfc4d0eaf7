import assert from 'node:assert/strict';
import test from 'node:test';
import { allLines, assemble, decodeText, indexText, lineAt, sliceLines, type Piece } from '../../daemon/engine/text.ts';

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

test('CRLF only when every break is CRLF; otherwise CR is content', () => {
  assert.deepEqual(shape('a\r\nb\r\n'), { eol: '\r\n', lines: ['a', 'b'], finalNewline: true });
  assert.deepEqual(shape('a\r\nb\n').lines, ['a\r', 'b']);
});

test('lineAt and allLines agree, blank lines and a missing final newline included', () => {
  for (const text of ['a\n\nb', '\n\n', 'x\r\n\r\ny\r\n', 'only']) {
    const file = indexText(text);
    assert.deepEqual(Array.from(file.starts, (_, index) => lineAt(file, index)), allLines(file));
  }
});

test('sliceLines ends every line with the file ending, even the last', () => {
  const file = indexText('a\r\nb\r\nc');
  assert.equal(sliceLines(file, 1, 3), 'b\r\nc\r\n');
  assert.equal(sliceLines(file, 2, 2), '');
});

test('decode then encode is byte-exact for LF, CRLF, BOM, mixed and no final newline', () => {
  for (const text of ['a\nb\n', 'a\r\nb\r\n', 'a\r\nb', '\uFEFFx\ny\n', 'a\r\nb\nc', '\n\n', 'x']) {
    const decoded = decodeText(bytes(text), 'f');
    assert.ok(decoded.ok);
    const whole = [{ from: 0, to: decoded.value.starts.length }];
    assert.equal(new TextDecoder('utf-8', { ignoreBOM: true }).decode(assemble(decoded.value, whole, decoded.value.finalNewline)), text);
  }
});

test('assemble gives the same bytes on the ASCII fast path and the string path', () => {
  for (const text of ['a\nb\nc', '\uFEFFa\r\nb\r\n', 'é\nb\nc\n', 'x\ny']) {
    const decoded = decodeText(bytes(text), 'f');
    assert.ok(decoded.ok);
    const viaString = { ...decoded.value, asciiBytes: undefined };
    for (const finalNewline of [true, false]) {
      const pieces: Piece[] = [{ from: 1, to: decoded.value.starts.length }, `new${decoded.value.eol}`, { from: 0, to: 1 }];
      assert.deepEqual(assemble(decoded.value, pieces, finalNewline), assemble(viaString, pieces, finalNewline));
    }
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
