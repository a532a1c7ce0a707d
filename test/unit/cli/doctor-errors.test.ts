// `loopguard doctor` when it cannot scan: one line naming the cause and the fix, exit 2, and nothing on stdout. The
// credentials case runs the real credential chain with an empty environment, so no key and no network are involved
// (the integration suite covers the same failures against the local TKE).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { createCredentialProvider } from '../../../src/cloud/index.js';
import { readCluster, tlsFailure } from '../../../src/cli/cluster-reads.js';
import { selfSignedCert } from '../../../src/runtime/self-signed-cert.js';
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

// Issue 22 #10: a certificate the kubeconfig does not trust is said to be one, not "does not answer (fetch failed)".
describe('loopguard doctor, when the API server certificate is not trusted', () => {
  async function withServer(run: (server: string, ca: string) => Promise<void>): Promise<void> {
    const { cert, key } = selfSignedCert(['localhost', '127.0.0.1']);
    const srv = createServer({ cert, key }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"ServiceList","items":[]}'));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    try {
      await run(`https://127.0.0.1:${(srv.address() as AddressInfo).port}`, cert);
    } finally {
      srv.closeAllConnections();
      await new Promise((resolve) => srv.close(resolve));
    }
  }
  const kubeConfigFor = (server: string, caData?: string) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server, ...(caData ? { caData: Buffer.from(caData).toString('base64') } : {}) }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    return kc;
  };

  it('names the TLS failure, the server and the kubeconfig setting to check', async () => {
    await withServer(async (server) => {
      const err = await readCluster(kubeConfigFor(server), server, { namespace: 'x' }).catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(
        new RegExp(`^cannot list Services in namespace x: the TLS certificate of ${server.replace(/\./g, '\\.')} is not trusted: self-signed certificate.*\\(DEPTH_ZERO_SELF_SIGNED_CERT\\)\\. Fix: check the kubeconfig's certificate-authority`),
      );
      expect((err as Error).message).not.toContain('does not answer');
    });
  });

  it('a trusted certificate reads, and a refused connection is still "does not answer"', async () => {
    await withServer(async (server, ca) => {
      await expect(readCluster(kubeConfigFor(server, ca), server, { namespace: 'x' })).resolves.toMatchObject({ services: [] });
    });
    const closed = 'https://127.0.0.1:1';
    const err = await readCluster(kubeConfigFor(closed), closed, { namespace: 'x' }).catch((e: unknown) => e as Error);
    expect((err as Error).message).toMatch(/does not answer \(fetch failed\)/);
  });

  it('finds the certificate error however deep fetch wrapped it, and nothing else', () => {
    const x509 = Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' });
    expect(tlsFailure(new TypeError('fetch failed', { cause: new Error('wrapped', { cause: x509 }) }))).toBe('certificate has expired (CERT_HAS_EXPIRED)');
    expect(tlsFailure(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) }))).toBeUndefined();
  });
});

