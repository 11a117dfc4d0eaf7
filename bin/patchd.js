#!/usr/bin/env node
// patchd launcher. In a checkout the TypeScript sources sit beside this file, and they always
// run (through tsx), so a dist/ built from older sources can never win over edited code. An
// installed package ships only dist/ and runs that.
//
// CommonJS on purpose (bin/package.json): it runs before anything has used libuv's threadpool,
// so it can still size it. The daemon (`serve`, `mcp`) does every read, write and fsync there and
// gets 64 threads (see DAEMON_THREADPOOL_SIZE in client/daemonProcess.ts) unless
// UV_THREADPOOL_SIZE is set; an ES module entry cannot do this, the module loader has started the
// pool with 4 threads before its first line runs. One-shot commands keep libuv's default.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const command = process.argv[2];
if ((command === 'serve' || command === 'mcp') && process.env.UV_THREADPOOL_SIZE === undefined) process.env.UV_THREADPOOL_SIZE = '64';

const source = join(__dirname, '..', 'daemon', 'main.ts');

if (existsSync(source)) {
  loadTsx().then(() => import(pathToFileURL(source).href));
} else {
  import(pathToFileURL(join(__dirname, '..', 'dist', 'daemon', 'main.js')).href);
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
