/**
 * The OpenAI custom tool's Lark grammar, checked with a real Lark parser (Debian's
 * python3-lark, installed by .ci/run) against the shared corpus.
 *
 * What the grammar claims: a bare unified diff, as a grammar-constrained model emits it. So a
 * corpus patch is given to it as its diff body: the inside of its code fence when it has one,
 * else the text from its first `diff --git` / `---` / `@@` line on, with its last line ended
 * by a newline. (patchd itself also takes the prose, fences and missing final newline.)
 * It must accept the body of every unified case that should apply, reject the structurally
 * malformed rejects (no file header, bad hunk header, binary sections), and reject every
 * other dialect.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { anthropic, openai, UNIFIED_DIFF_LARK_GRAMMAR } from '../../protocol/tools/index.ts';
import { findCorpus, loadSuite, type CorpusCase } from '../helpers/corpus.ts';

const STRUCTURAL_ERRORS = new Set(['missing_file_header', 'invalid_hunk_header', 'unsupported_git_patch_feature']);

const LARK_CHECK = `
import json, sys
from lark import Lark
from lark.exceptions import LarkError
request = json.load(sys.stdin)
parser = Lark(request["grammar"], parser="lalr")
def accepts(text):
    try:
        parser.parse(text)
        return True
    except LarkError:
        return False
json.dump([accepts(text) for text in request["texts"]], sys.stdout)
`;

/** A Python 3 that can import lark: `$PATCHD_PYTHON`, `python3` on PATH, or Debian's own (a pyenv shim may hide it). */
function findLarkPython(): string | undefined {
  const candidates = [process.env.PATCHD_PYTHON, 'python3', '/usr/bin/python3'].filter((name): name is string => name !== undefined && name !== '');
  return candidates.find((python) => spawnSync(python, ['-c', 'import lark'], { stdio: 'ignore' }).status === 0);
}

function larkAccepts(python: string, texts: readonly string[]): boolean[] {
  const result = spawnSync(python, ['-c', LARK_CHECK], {
    input: JSON.stringify({ grammar: UNIFIED_DIFF_LARK_GRAMMAR, texts }), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as boolean[];
}

function diffBody(patch: string): string {
  const fenced = /^```[\w-]*\n([\s\S]*?)^```/m.exec(patch);
  const text = fenced?.[1] ?? patch;
  const start = text.search(/^(diff --git |--- |@@)/m);
  const body = start < 0 ? text : text.slice(start);
  return body.endsWith('\n') ? body : `${body}\n`;
}

const python = findLarkPython();
const corpus = findCorpus();
const inCi = process.env.CI === 'true';
const missing = python === undefined ? 'python3-lark (apt-get install python3-lark)' : corpus === undefined ? 'the conformance corpus' : undefined;

test('the Lark grammar accepts every unified diff that should apply and rejects the malformed ones and other dialects', { skip: missing !== undefined && !inCi ? `${missing} not found: skipped` : false }, () => {
  assert.ok(python !== undefined && corpus !== undefined, `CI=true but ${missing} is missing`);
  const cases: CorpusCase[] = ['git-history', 'llm-unified', 'eol', 'codex', 'search-replace'].flatMap((suite) => loadSuite(corpus, suite));
  const checked = cases.filter((c) => c.patch !== undefined && (c.format !== 'unified' || c.expect === 'apply' || STRUCTURAL_ERRORS.has(c.error ?? '')));
  const wanted = checked.map((c) => c.format === 'unified' && c.expect === 'apply');
  const accepted = larkAccepts(python, checked.map((c) => diffBody(c.patch ?? '')));

  const wrong = checked.filter((_, index) => accepted[index] !== wanted[index]).map((c) => `${c.suite}/${c.id} (${c.format}, ${c.expect}${c.error ? ` ${c.error}` : ''})`);
  assert.deepEqual(wrong, []);
  assert.ok(wanted.filter(Boolean).length >= 290, 'every unified apply case of git-history, llm-unified and eol was checked');
  assert.ok(wanted.filter((want) => !want).length >= 12 + 50, 'the malformed rejects and the other dialects were checked');
});

test('the guidance examples are sentences of the grammar', { skip: python === undefined && !inCi ? 'python3-lark not found: skipped' : false }, () => {
  assert.ok(python !== undefined, 'CI=true but python3-lark is missing');
  const jsonExample = JSON.parse(/^\{"patch":.*\}$/m.exec(anthropic.guidance)?.[0] ?? '{}') as { patch: string };
  assert.deepEqual(larkAccepts(python, [jsonExample.patch, '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n']), [true, false]);
  assert.ok(openai.customToolGuidance.includes(jsonExample.patch));
});
