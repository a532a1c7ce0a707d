#!/usr/bin/env node
// The `loopguard` command (package.json "bin"). A source checkout runs src/cli/main.ts through tsx (a devDependency),
// so `npx loopguard` works right after `npm ci` and never runs a stale build; an installed package without src/
// runs the compiled dist/cli/main.js (`npm run build`). The image runs its bundle instead (`IMAGE doctor …`).
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
