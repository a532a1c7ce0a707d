// npm run lab on a machine without root, namespaces or nftables: it says exactly what is missing and exits
// non-zero (issue 14 #4). The verdict is pure; the CLI is run with capabilities simulated as missing, so this
// holds on any machine (CI has them all).
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { missing, parseSimulated } from '../../../lab/preflight.js';

function runLab(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'lab/main.ts', ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('lab preflight', () => {
  it('names each missing piece with its fix, in a stable order', () => {
    expect(missing({ uid: 0, problems: {} })).toEqual([]);
    const lines = missing({ uid: 1000, problems: { nft: 'spawn nft ENOENT', root: 'running as uid 1000' } });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^missing root: running as uid 1000 — run it as root/);
    expect(lines[1]).toMatch(/^missing nftables: spawn nft ENOENT — install nftables/);
  });

  it('refuses an unknown capability to simulate', () => {
    expect([...parseSimulated('root, nft')]).toEqual(['root', 'nft']);
    expect(() => parseSimulated('ipvs')).toThrow(/unknown capability ipvs/);
  });

  it.each([
    ['root', /missing root: simulated \(--simulate-missing root\)/],
    ['netns', /missing network namespaces: simulated/],
    ['nft', /missing nftables: simulated/],
  ])('npm run lab without %s: says so and exits 2 before creating anything', async (capability, message) => {
    const r = await runLab(['--profile', 'short', '--simulate-missing', capability]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/npm run lab cannot run on this machine:/);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).not.toMatch(/lab .* up in/);
  });
});
