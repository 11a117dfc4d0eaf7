import assert from 'node:assert/strict';
import fc from 'fast-check';
import test from 'node:test';
import { allLines, assemble, decodeText, endingNear, indexText, lineAt, lineEnding, linesIn, TextWriter, utf8Length, type Piece, type TextFile } from '../../daemon/engine/text.ts';

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

test('lineAt, linesIn and allLines agree in both views, blank lines and a missing final newline included', () => {
  for (const text of ['a\n\nb', '\n\n', 'x\r\n\r\ny\r\n', 'only', 'a\r\nb\n\r\n', '\r\n', 'x\r', 'a\r\nb\r', 'c\r\r\nd\re\r']) {
    const file = indexText(text);
    for (const view of ['content', 'raw'] as const) {
      const all = allLines(file, view);
      assert.deepEqual(Array.from(file.starts, (_, index) => lineAt(file, index, view)), all, `${JSON.stringify(text)} ${view}`);
      for (let from = 0; from <= all.length; from++) {
        for (let to = from; to <= all.length; to++) assert.deepEqual(linesIn(file, from, to, view), all.slice(from, to), `${JSON.stringify(text)} ${view} [${from}, ${to})`);
      }
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
    const pieces: Piece[] = [{ from: 1, to: decoded.value.starts.length }, `new${decoded.value.eol}`, { from: 0, to: 1 }, `é😀${decoded.value.eol}`];
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

test('an ASCII file indexed from its bytes reads exactly as the decoded text does, at any byte offset', () => {
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** What decodeText gives through the full decode, without its ASCII fast path. */
  const viaText = (raw: Uint8Array): TextFile | 'binary' => {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return 'binary';
    }
    if (text.includes('\0')) return 'binary';
    return text.startsWith('\uFEFF') ? indexText(text.slice(1), true) : indexText(text);
  };
  const readings = (file: TextFile) => ({
    bom: file.bom, eol: file.eol, crlfCount: file.crlfCount, finalNewline: file.finalNewline, starts: Array.from(file.starts),
    lines: ['content', 'raw'].map((view) => Array.from(file.starts, (_, index) => lineAt(file, index, view as 'content' | 'raw'))),
    all: [allLines(file), allLines(file, 'raw')],
    halves: ['content', 'raw'].flatMap((view) => [linesIn(file, 0, file.starts.length >> 1, view as 'content' | 'raw'), linesIn(file, file.starts.length >> 1, file.starts.length, view as 'content' | 'raw')]),
    endings: Array.from(file.starts, (_, index) => [lineEnding(file, index), endingNear(file, index)]),
    text: file.text,
  });
  // Mostly ASCII text and line breaks (and VT, 11: XORed with LF it is 1, which a cheap zero-byte test flags after a zero byte); now and then a NUL, a byte ≥ 0x80 or a BOM, which leave the fast path.
  const byte = fc.oneof({ weight: 30, arbitrary: fc.constantFrom(10, 13, 32, 97, 98, 10, 10, 13, 9, 11) }, { weight: 1, arbitrary: fc.constantFrom(0, 0x80, 0xc3, 0xef, 0xbb, 0xbf) });
  fc.assert(fc.property(fc.array(byte, { maxLength: 120 }), fc.nat(7), (values, offset) => {
    const buffer = new Uint8Array(values.length + offset + 5).fill(10);
    buffer.set(values, offset);
    const raw = buffer.subarray(offset, offset + values.length);
    const decoded = decodeText(raw, 'f');
    const expected = viaText(raw);
    if (expected === 'binary') return assert.ok(!decoded.ok);
    assert.ok(decoded.ok);
    assert.deepEqual(readings(decoded.value), readings(expected));
  }), { numRuns: 2_000 });
});

test('utf8Length counts what TextEncoder writes, lone surrogates included', () => {
  const unit = fc.constantFrom('a', '\n', 'é', '€', '😀', '\uD800', '\uDC00', '\u07FF', '\u0800', '\uFFFF');
  fc.assert(fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
    const text = units.join('');
    assert.equal(utf8Length(text), new TextEncoder().encode(text).length);
  }), { numRuns: 1_000 });
});
