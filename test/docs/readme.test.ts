/** The README stays true: its reference tables match the code, and its CLI examples run and print what it shows. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ERROR_HINTS, FORMATS } from '../../protocol/index.ts';
import { APPLY_OPTIONS, FOREIGN_APPLY_OPTIONS } from '../../daemon/cli/applyOptions.ts';
import { USAGE } from '../../daemon/cli/help.ts';
import { SERVE_OPTIONS } from '../../daemon/cli/serve.ts';
import { ENVIRONMENT_HELP } from '../../daemon/cli/settings.ts';
import { BIN, REPO_ROOT } from '../helpers/cli.ts';
import { findCorpus, loadSuite, SUITES } from '../helpers/corpus.ts';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** The text of a `## ` section, up to the next one. */
function section(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `README has no section ${heading}`);
  const end = readme.indexOf('\n## ', start + heading.length + 2);
  return readme.slice(start, end < 0 ? undefined : end);
}

test('every error code is in the README with its exact hint', () => {
  for (const [code, hint] of Object.entries(ERROR_HINTS)) {
    assert.ok(readme.includes(`| \`${code}\` | ${hint} |`), `README lacks the row for ${code}`);
  }
});

test('the README gives the conformance corpus its size', { skip: findCorpus() === undefined ? 'no conformance corpus beside this checkout' : false }, () => {
  const corpus = findCorpus()!;
  const cases = SUITES.reduce((total, suite) => total + loadSuite(corpus, suite).length, 0);
  assert.match(readme, new RegExp(`conformance corpus \\(${cases} cases from`));
});

test('every format is described in the README', () => {
  for (const format of FORMATS) assert.ok(readme.includes(`| \`${format}\` |`), `README lacks the format ${format}`);
});

test('the README shows the commands a newcomer runs', () => {
  for (const command of ['npm install', 'npm start', 'npm test', 'npm run bench']) assert.ok(readme.includes(command), command);
});

describe('the README\'s CLI section', () => {
  const cli = section('## The CLI');

  test('shows the usage the CLI prints', () => {
    assert.ok(cli.includes(`\`\`\`text\n${USAGE}\n\`\`\``), 'the usage block differs from patchd --help');
  });

  test('documents every option, and only options that exist (or that patchd apply refuses with a reason)', () => {
    const spellings = [...Object.values(APPLY_OPTIONS), ...Object.values(SERVE_OPTIONS)].flatMap((spec) => [spec.short ?? [], spec.also ?? []].flat());
    const longs = new Set([...Object.keys(APPLY_OPTIONS), ...Object.keys(SERVE_OPTIONS), ...spellings.filter((name) => name.length > 1)]);
    const shorts = spellings.filter((name) => name.length === 1);
    const mentioned = new Set([...cli.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((match) => match[1]!));
    const refused = (name: string) => Object.hasOwn(FOREIGN_APPLY_OPTIONS, name);
    for (const name of mentioned) assert.ok(longs.has(name) || name === 'version' || refused(name), `README mentions --${name}, which no command takes`);
    for (const name of longs) assert.ok(mentioned.has(name), `README does not mention --${name}`);
    for (const short of shorts) assert.match(cli, new RegExp(`(?<![\\w-])-${short}\\b`), `README does not mention -${short}`);
  });

  test('lists exactly the environment variables the commands read', () => {
    const documented = [...cli.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]!).sort();
    const read = [...ENVIRONMENT_HELP.matchAll(/^ {2}([A-Z_]+) /gm)].map((match) => match[1]!);
    for (const name of read) assert.ok(documented.includes(name), `README's environment table lacks ${name}`);
    for (const name of documented) assert.ok(name === 'XDG_STATE_HOME' || read.includes(name), `${name} is documented but not read`);
  });

  test('every console example runs and prints what the README shows', async () => {
    const steps = consoleSteps(cli);
    assert.ok(steps.length >= 15, `only ${steps.length} commands found`);
    using sandbox = createSandbox();
    const background: ChildProcess[] = [];
    try {
      for (const step of steps) {
        if (step.command.endsWith(' &')) {
          background.push(await startInBackground(step.command.slice(0, -2), sandbox));
          continue;
        }
        const run = spawnSync('sh', ['-c', `exec 2>&1; ${step.command}`], { cwd: sandbox.dir, env: sandbox.env, encoding: 'utf8', timeout: 60_000 });
        assertShows(run.stdout, step.expected, step.command);
      }
    } finally {
      await Promise.all(background.map(stop));
    }
  });
});

interface Step {
  readonly command: string;
  readonly expected: readonly string[];
}

/** The `$ command` lines of every ```console block, each with the lines it prints. */
function consoleSteps(text: string): Step[] {
  const steps: { command: string; expected: string[] }[] = [];
  for (const block of text.matchAll(/```console\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.trimEnd().split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: [] });
      else steps.at(-1)!.expected.push(line);
    }
  }
  return steps;
}

/** Output matches line by line; timings are free, and a line ending in `…` matches any line it begins. */
function assertShows(output: string, expected: readonly string[], command: string): void {
  const normalise = (line: string) => line.replace(/, \d+ ms\)/, ', N ms)');
  const actual = output.trimEnd() === '' ? [] : output.trimEnd().split('\n').map(normalise);
  const shown = expected.map(normalise);
  const matches = actual.length === shown.length && shown.every((line, index) => (line.endsWith('…') ? actual[index]!.startsWith(line.slice(0, -1)) : actual[index] === line));
  assert.ok(matches, `$ ${command}\nREADME shows:\n${shown.join('\n')}\nbut it printed:\n${actual.join('\n')}`);
}

interface Sandbox extends Disposable {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A directory like the repository's root (examples/ linked in) with `patchd` on PATH and a private HOME. */
function createSandbox(): Sandbox {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'patchd-readme-')));
  symlinkSync(join(REPO_ROOT, 'examples'), join(dir, 'examples'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'home'));
  writeFileSync(join(dir, 'bin', 'patchd'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
  chmodSync(join(dir, 'bin', 'patchd'), 0o755);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: join(dir, 'home'), PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}` };
  for (const name of ['PATCHD_STATE_DIR', 'XDG_STATE_HOME', 'NO_COLOR', 'PATCHD_LOG_LEVEL', 'PATCHD_TASK_TIMEOUT_MS']) delete env[name];
  return { dir, env, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts a `patchd serve …` example and resolves once it logs that it is serving. */
function startInBackground(command: string, sandbox: Sandbox): Promise<ChildProcess> {
  const child = spawn('sh', ['-c', `exec ${command}`], { cwd: sandbox.dir, env: { ...sandbox.env, PATCHD_LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      if (log.includes('"msg":"serving"')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before serving:\n${log}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

test('how to add patchd to another project names no placeholder: the commands are the ones test/package runs', () => {
  const install = section('## Use it from another project');
  assert.doesNotMatch(install, /OWNER|USER\/|example\.(com|org)|<your[^>]*>/, 'a placeholder a reader would have to guess');
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.match(install, /^npm pack\b/m);
  assert.ok(install.includes(`\nnpm install ../patchd/patchd-${version}.tgz`), `the tarball npm pack writes is patchd-${version}.tgz`);
});
