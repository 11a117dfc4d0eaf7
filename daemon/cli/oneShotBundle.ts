/**
 * The one-shot bundle (`build/bundleOneShot.mjs`) is one CommonJS file, compiled here with V8's
 * code cache that the build recorded after running a dry run and an apply through it. A process
 * that starts from the cache skips parsing and compiling what those runs used, about a third of
 * a one-shot apply's own start-up. Node 20 has no code cache for ES modules, hence CommonJS.
 *
 * V8 rejects a cache made by another V8 version or with other flags (`cachedDataRejected`) and
 * then compiles as usual. It checks the source only by its length, so a cache must never meet a
 * bundle from another build: the build empties the directory first and writes `inputs.json`
 * last, and `main.ts` runs the bundle only while `inputs.json` is there.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { constants, Script } from 'node:vm';

export const BUNDLE_FILE = 'command.cjs';
export const CODE_CACHE_FILE = 'command.cache';

type Commands = typeof import('./command.ts');

export interface CompiledBundle {
  readonly script: Script;
  /** Runs the bundle's module body once; the bundle's exports. */
  load(): Commands;
}

/** Compiles the bundle in `directory`, from its code cache when there is one V8 accepts. */
export function compileBundle(directory: string, useCache = true): CompiledBundle {
  const filename = path.join(directory, BUNDLE_FILE);
  const source = readFileSync(filename, 'utf8');
  const cachedData = useCache ? readCache(path.join(directory, CODE_CACHE_FILE)) : undefined;
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename, cachedData, importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  return {
    script,
    load() {
      const module = { exports: {} as Commands };
      (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(filename), module, filename, path.dirname(filename));
      return module.exports;
    },
  };
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}
