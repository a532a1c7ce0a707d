// A copy of the checkout and a bash with nothing but PATH and HOME: how a user runs the README's commands, without
// touching the developer's own .dev/ state in this checkout (readme-local-run.test.ts, demo.test.ts).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

export function copyCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-readme-'));
  const skip = new Set(['node_modules', '.git', '.dev', 'dist', 'coverage', '.cache']);
  cpSync(REPO_ROOT, dir, { recursive: true, filter: (src) => !skip.has(relative(REPO_ROOT, src).split('/')[0] ?? '') });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

export interface Run {
  code: number | null;
  output: string;
}

/** Process groups of the scripts started here, for the suites to stop on the way out (npm start runs in one). */
export const groups: number[] = [];

/** bash with PATH and HOME only, as its own process group (so a timeout can stop all of it). */
export function bash(script: string, cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid) groups.push(child.pid);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[test] timed out after ${timeoutMs} ms; killing the script\n`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

