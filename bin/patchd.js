#!/usr/bin/env node
// patchd launcher. In a checkout the TypeScript sources sit beside this file, and they always
// run (through tsx), so a dist/ built from older sources can never win over edited code. An
// installed package ships only dist/ and runs that.
import { existsSync } from 'node:fs';

const source = new URL('../daemon/main.ts', import.meta.url);

if (existsSync(source)) {
  await loadTsx();
  await import(source.href);
} else {
  await import(new URL('../dist/daemon/main.js', import.meta.url).href);
}

async function loadTsx() {
  try {
    const { register } = await import('tsx/esm/api');
    register();
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    process.stderr.write('patchd: this checkout runs its TypeScript sources through tsx, which is not installed; run `npm install` first.\n');
    process.exit(2);
  }
}
