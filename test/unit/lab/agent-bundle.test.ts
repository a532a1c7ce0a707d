// The lab's agent as the bundle every lab namespace runs (lab/agent-bundle.ts): it speaks lab/agent.ts's protocol and
// exits 0 when its stdin closes, the lab removes its directory, and a later run removes a killed run's. No namespace
// or root needed: the agent runs in this one.
import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { AgentBundle, reapOrphanBundles } from '../../../lab/agent-bundle.js';
import { newPrefix } from '../../../lab/names.js';
import { BUNDLE_NODE_OPTIONS } from '../../../scripts/lib/bundle.js';

describe('the lab agent bundle', () => {
  it('answers a request and a malformed line as lab/agent.ts does, exits 0 when stdin closes, and is removed with the lab', async () => {
    const prefix = newPrefix();
    const bundle = new AgentBundle(prefix);
    let file: string | undefined;
    try {
      file = await bundle.file();
      expect(dirname(file).startsWith(join(tmpdir(), `${prefix}agent-`))).toBe(true);

      const child = spawn(process.execPath, [...BUNDLE_NODE_OPTIONS, file], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines: unknown[] = [];
      createInterface({ input: child.stdout }).on('line', (l) => lines.push(JSON.parse(l)));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.stdin.write(`${JSON.stringify({ id: 1, req: { op: 'ping' } })}\nnot json\n`);
      child.stdin.end();
      expect(await exited).toBe(0);
      expect(lines).toEqual(expect.arrayContaining([{ id: 1, ok: true, result: 'pong' }, { id: -1, ok: false, error: expect.stringMatching(/JSON/) }]));
      expect(lines).toHaveLength(2);
    } finally {
      await bundle.remove();
    }
    expect(file !== undefined && !existsSync(dirname(file))).toBe(true);
  });

  it("removes a bundle directory whose run is gone, and not a live run's, nor a symlink or a file with such a name", async () => {
    const gone = spawnSync('true').pid; // exited: no process has this pid (until it is reused)
    const root = mkdtempSync(join(tmpdir(), 'lg-reap-test-'));
    const dead = join(root, `lg-lab-${gone}-1-agent-test01`);
    const live = join(root, `lg-lab-${process.pid}-999-agent-test02`);
    const target = join(root, 'not-a-bundle');
    const link = join(root, `lg-lab-${gone}-2-agent-test03`);
    const file = join(root, `lg-lab-${gone}-3-agent-test04`);
    try {
      for (const d of [dead, live, join(target, 'kept')]) mkdirSync(join(d, 'inside'), { recursive: true });
      symlinkSync(target, link);
      writeFileSync(file, '');
      await reapOrphanBundles(root);
      expect([dead, live, link, file, join(target, 'kept', 'inside')].map((p) => existsSync(p))).toEqual([false, true, true, true, true]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
