#!/usr/bin/env node
// patchd launcher: runs the compiled daemon when built, else the TypeScript source through tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/daemon/main.js', import.meta.url);

if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../daemon/main.ts', import.meta.url).href);
}
