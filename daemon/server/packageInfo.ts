/** This package's name and version, read from its package.json (source and compiled layouts differ in depth). */
import { readFileSync } from 'node:fs';

export interface PackageInfo {
  readonly name: string;
  readonly version: string;
}

let cached: PackageInfo | undefined;

export function packageInfo(): PackageInfo {
  cached ??= findPackageInfo();
  return cached;
}

function findPackageInfo(): PackageInfo {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    const info = readPackageJson(new URL('package.json', dir));
    if (info?.name === 'patchd') return info;
  }
  return { name: 'patchd', version: '0.0.0' };
}

function readPackageJson(url: URL): PackageInfo | undefined {
  try {
    const json = JSON.parse(readFileSync(url, 'utf8')) as Partial<PackageInfo>;
    return typeof json.name === 'string' && typeof json.version === 'string' ? { name: json.name, version: json.version } : undefined;
  } catch {
    return undefined;
  }
}
