// The lab's agent as the bundle every lab namespace runs (lab/agent-bundle.ts): it speaks lab/agent.ts's protocol and
// exits 0 when its stdin closes, the lab removes its directory, and a later run removes a killed run's. No namespace
// or root needed: the agent runs in this one.
import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
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
    const file = await bundle.file();
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

    await bundle.remove();
    expect(existsSync(dirname(file))).toBe(false);
  });

  it("removes a bundle directory whose run is gone, and not a live run's", async () => {
    const gone = spawnSync('true').pid; // exited: no process has this pid (until it is reused)
    const dead = join(tmpdir(), `lg-lab-${gone}-1-agent-test01`);
    const live = join(tmpdir(), `lg-lab-${process.pid}-999-agent-test02`);
    for (const d of [dead, live]) mkdirSync(join(d, 'inside'), { recursive: true });
    try {
      await reapOrphanBundles();
      expect([existsSync(dead), existsSync(live)]).toEqual([false, true]);
    } finally {
      for (const d of [dead, live]) rmSync(d, { recursive: true, force: true });
    }
  });
});
