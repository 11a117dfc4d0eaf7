import assert from 'node:assert/strict';
import test from 'node:test';
import { decodeText, encodeText, joinText, splitText } from '../../daemon/engine/text.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

test('LF text keeps its final newline state', () => {
  assert.deepEqual(splitText('a\nb\n'), { bom: false, eol: '\n', lines: ['a', 'b'], finalNewline: true });
  assert.deepEqual(splitText('a\nb'), { bom: false, eol: '\n', lines: ['a', 'b'], finalNewline: false });
});

test('an empty file counts as ending with a newline', () => {
  assert.deepEqual(splitText(''), { bom: false, eol: '\n', lines: [], finalNewline: true });
});

test('CRLF only when every break is CRLF; otherwise CR is content', () => {
  assert.equal(splitText('a\r\nb\r\n').eol, '\r\n');
  assert.deepEqual(splitText('a\r\nb\n').lines, ['a\r', 'b']);
});

test('round trip is byte-exact for LF, CRLF, BOM, mixed and no final newline', () => {
  for (const text of ['a\nb\n', 'a\r\nb\r\n', 'a\r\nb', '\uFEFFx\ny\n', 'a\r\nb\nc', '\n\n', 'x']) {
    const decoded = decodeText(bytes(text), 'f');
    assert.ok(decoded.ok);
    assert.equal(new TextDecoder('utf-8', { ignoreBOM: true }).decode(encodeText(decoded.value)), text);
  }
});

test('a BOM is remembered and restored', () => {
  const decoded = decodeText(bytes('\uFEFFhello\n'), 'f');
  assert.ok(decoded.ok);
  assert.equal(decoded.value.bom, true);
  assert.deepEqual(decoded.value.lines, ['hello']);
  assert.equal(joinText(decoded.value), '\uFEFFhello\n');
});

test('NUL bytes and invalid UTF-8 are binary_file', () => {
  for (const raw of [new Uint8Array([104, 0, 105]), new Uint8Array([0xff, 0xfe, 0x41])]) {
    const decoded = decodeText(raw, 'blob.bin');
    assert.ok(!decoded.ok);
    assert.equal(decoded.error.code, 'binary_file');
    assert.equal(decoded.error.path, 'blob.bin');
  }
});
