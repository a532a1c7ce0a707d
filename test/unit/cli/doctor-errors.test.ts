// `loopguard doctor` when it cannot scan: one line naming the cause and the fix, exit 2, and nothing on stdout. The
// credentials case runs the real credential chain with an empty environment, so no key and no network are involved
// (the integration suite covers the same failures against the local TKE).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createCredentialProvider } from '../../../src/cloud/index.js';
import { cli, oneLineError } from './run.js';

/** A kubeconfig whose server is never reached by these tests (each fails before listing anything). */
function kubeconfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-doctor-'));
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u}\ncurrent-context: ctx\n',
  );
  return path;
}

describe('loopguard doctor, when it cannot scan', () => {
  it('names a kubeconfig that cannot be read', async () => {
    const r = await cli(['doctor', '--kubeconfig', '/nonexistent/kubeconfig', '--region', 'ap-guangzhou']);
    expect(r.code).toBe(2);
    expect(oneLineError(r)).toMatch(/^loopguard doctor: cannot read kubeconfig \/nonexistent\/kubeconfig: ENOENT.*Fix: point --kubeconfig or KUBECONFIG/);
  });

  it('names a context the kubeconfig does not have', async () => {
    const r = await cli(['doctor', '--kubeconfig', kubeconfig(), '--context', 'prod', '--region', 'ap-guangzhou']);
    expect(r.code).toBe(2);
    expect(oneLineError(r)).toMatch(/has no context "prod" \(it has: ctx\)/);
  });

  it('says when no Tencent Cloud credentials are found', async () => {
    const r = await cli(['doctor', '--kubeconfig', kubeconfig(), '--region', 'ap-guangzhou'], {
      doctor: { credentials: createCredentialProvider({ mode: 'env', env: {} }) },
    });
    expect(r.code).toBe(2);
    expect(oneLineError(r)).toMatch(/^loopguard doctor: cannot read CLBs in region ap-guangzhou: .*credentials/i);
  });

  it('needs a region, and rejects contradicting or invalid flags', async () => {
    const saved = process.env['TENCENTCLOUD_REGION'];
    delete process.env['TENCENTCLOUD_REGION'];
    try {
      const r = await cli(['doctor', '--kubeconfig', kubeconfig()]);
      expect(r.code).toBe(2);
      expect(oneLineError(r)).toBe("loopguard doctor: no region: set --region or TENCENTCLOUD_REGION (e.g. ap-guangzhou), the region of the cluster's CLBs");
    } finally {
      if (saved !== undefined) process.env['TENCENTCLOUD_REGION'] = saved;
    }
    expect(oneLineError(await cli(['doctor', '-n', 'a', '-A', '--region', 'r']))).toBe('loopguard doctor: give either -n NAMESPACE or -A, not both');
    const rate = await cli(['doctor', '--cloud-rate-limit', '50']);
    expect(rate.code).toBe(2);
    expect(oneLineError(rate)).toMatch(/expected a whole number from 1 to 20/);
    const format = await cli(['doctor', '-o', 'html']);
    expect(format.code).toBe(2);
    expect(oneLineError(format)).toMatch(/Allowed choices are table, wide, json, yaml, markdown, sarif/);
    expect(oneLineError(await cli(['doctor', '--context', 'a', '--all-contexts', '--region', 'r']))).toBe('loopguard doctor: give either --context (repeatable) or --all-contexts, not both');
  });

  it('fleet: names the contexts the kubeconfig does not have, before scanning any', async () => {
    const r = await cli(['doctor', '--kubeconfig', kubeconfig(), '--context', 'ctx', '--context', 'prod', '--context', 'stage', '--region', 'ap-guangzhou']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(oneLineError(r)).toMatch(/has no context "prod", "stage" \(it has: ctx\)/);
  });

  it('prints help with exit 0, and usage with exit 2 when no subcommand is given', async () => {
    const help = await cli(['doctor', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: loopguard doctor');
    expect(help.stdout).toContain('--all-namespaces');
    const bare = await cli([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: loopguard');
  });
});
