// `loopguard plan`: offline verdicts for manifests, conditional where the CLB's facts are unknown, exit codes, inputs
// (files, directories, multi-document YAML, List, stdin, old Ingress shapes), the cluster profile from flags or a saved
// doctor report, and one-line failures.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import type { Report, TargetReport } from '../../../src/cli/report.js';
import { REPO_ROOT } from '../../controlplane/crds.js';
import { cli, oneLineError } from './run.js';
import { MAX_MANIFEST_BYTES, ManifestTooLarge, readAll } from '../../../src/cli/manifest-files.js';

const DEMO = 'config/samples/demo-workload.yaml';
const IPVS_18 = ['--kube-proxy-mode=ipvs', '--kube-proxy-version=v1.18.4-tke.20'];

function report(stdout: string): Report {
  return JSON.parse(stdout) as Report;
}

function byName(r: Report): Record<string, TargetReport> {
  return Object.fromEntries(r.targets.map((t) => [`${t.kind}/${t.name}`, t]));
}

function tmp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-plan-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const PRIVATE = 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid: subnet-1';
const annotated = `apiVersion: v1
kind: Service
metadata:
  name: annotated
  namespace: shop
  annotations: {${PRIVATE}, service.cloud.tencent.com/prevent-loopback: "true"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`;

describe('loopguard plan', () => {
  it('names the demo workload targets at risk in IPVS v1.18.4-tke.20 and exits 1 (as a process, through bin/loopguard.js)', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [join(REPO_ROOT, 'bin/loopguard.js'), 'plan', '-f', DEMO, ...IPVS_18], { cwd: REPO_ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/loopguard-demo\s+Service\s+orders\s+config\/samples\/demo-workload\.yaml:\d+\s+AtRisk\s+PodSourceNotMasqueraded/);
    expect(run.stdout).toMatch(/loopguard-demo\s+Ingress\s+api\s+\S+\s+AtRisk\s+L7Loopback/);
    expect(run.stdout).toMatch(/storefront\s+\S+\s+NotApplicable\s+PublicClb/);
    expect(run.stdout).toMatch(/legacy\s+\S+\s+Skipped\s+SkipAnnotation/);
    expect(run.stdout).toContain('2 at risk');
  });

  it('reports the plan Enforce would carry out, each target located at its manifest line, with the topology alternatives', async () => {
    const r = await cli(['plan', '-f', DEMO, ...IPVS_18, '-o', 'json']);
    expect(r.code).toBe(1);
    const t = byName(report(r.stdout));
    expect(t['Service/orders']?.source).toEqual({ file: DEMO, line: 8 });
    expect(t['Service/orders']?.plan).toEqual([
      'record the originals of 2 listener(s) (LoopbackRecord)',
      'set listener new-TCP-80 (TCP:80) of CLB (new CLB): health-check source 100.64.0.0/10',
      'set listener new-TCP-9090 (TCP:9090) of CLB (new CLB): health-check source 100.64.0.0/10',
      'annotate service.cloud.tencent.com/prevent-loopback: "true"; record 3 applied field(s) (LoopbackRecord)',
    ]);
    // The steps depend on the source the account's CLBs default to: said, not hidden.
    expect(t['Service/orders']?.assumed).toEqual({ 'health-check source': 'VIP' });
    expect(t['Service/orders']?.alternatives.map((a) => a.id)).toEqual(['ServiceDnsName', 'CoreDnsRewrite', 'LocalWithAntiAffinity', 'IpModeProxy']);
    expect(t['Ingress/api']?.alternatives.find((a) => a.id === 'CoreDnsRewrite')?.advice).toContain('rewrite name api.demo.internal orders.loopguard-demo.svc.cluster.local');
    expect(t['Ingress/api']?.plan[0]).toContain('tke-service-config-auto');
    expect(report(r.stdout).clusterProfile).toMatchObject({ kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.18.4-tke.20', vipBinding: 'OnAnnotation', source: 'Flag' });
  });

  it('follows the cluster profile: iptables answers the VIP locally, an old IPVS build cannot bind it', async () => {
    const iptables = byName(report((await cli(['plan', '-f', DEMO, '--kube-proxy-mode=iptables', '-o', 'json'])).stdout));
    expect(iptables['Service/orders']).toMatchObject({ verdict: 'NotApplicable', rootCause: 'VipServedLocally' });
    expect(iptables['Service/orders']?.alternatives.map((a) => a.id)).toEqual(['IpModeProxy']);
    expect(iptables['Ingress/api']).toMatchObject({ verdict: 'AtRisk', rootCause: 'L7Loopback' });
    const old = byName(report((await cli(['plan', '-f', DEMO, '--kube-proxy-mode=ipvs', '--kube-proxy-version=v1.18.4-tke.19', '-o', 'json'])).stdout));
    expect(old['Service/orders']).toMatchObject({ verdict: 'AtRisk', rootCause: 'KubeProxyTooOld', plan: [] });
    const unknown = byName(report((await cli(['plan', '-f', DEMO, '-o', 'json'])).stdout));
    expect(unknown['Service/orders']).toMatchObject({ verdict: 'AtRisk', rootCause: 'KubeProxyModeUnknown' });
  });

  it('says what a verdict depends on when the manifests cannot know the CLB, and pins it on request', async () => {
    const dir = tmp({ 'svc.yaml': annotated });
    const open = await cli(['plan', '-f', dir, ...IPVS_18]);
    expect(open.code).toBe(1);
    expect(open.stdout).toMatch(/annotated\s+\S+:1\s+AtRisk\?\s+VipHealthCheckDropped/);
    expect(open.stdout).toContain(
      'Condition: AtRisk (VipHealthCheckDropped) if the CLB keeps the VIP health-check source; Mitigated (LoopbackPrevented) if the CLB health-checks from 100.64.0.0/10',
    );
    const pinned = await cli(['plan', '-f', dir, ...IPVS_18, '--health-check-source', '100.64', '-o', 'json']);
    expect(pinned.code).toBe(0);
    const t = report(pinned.stdout).targets[0];
    expect(t).toMatchObject({ verdict: 'Mitigated', rootCause: 'LoopbackPrevented', plan: [] });
    expect(t?.condition).toBeUndefined();
  });

  it('tries both kinds of CLB for one brought with tke-existed-lbid, and keepalive for a TkeServiceConfig outside the manifests', async () => {
    const existing = `apiVersion: v1
kind: Service
metadata: {name: existing, namespace: shop, annotations: {service.kubernetes.io/tke-existed-lbid: lb-12345678}}
spec: {type: LoadBalancer, externalTrafficPolicy: Local, ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: named, namespace: shop, annotations: {kubernetes.io/ingress.subnetId: subnet-1, ingress.cloud.tencent.com/tke-service-config-auto: "true"}}
spec: {rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
`;
    const t = byName(report((await cli(['plan', '-f', '-', ...IPVS_18, '-o', 'json'], { stdin: existing })).stdout));
    expect(t['Service/existing']).toMatchObject({
      verdict: 'AtRisk',
      loadBalancerId: 'lb-12345678',
      condition: 'AtRisk (PodSourceNotMasqueraded) if the existing CLB is private; NotApplicable (PublicClb) if the existing CLB is public',
      source: { file: 'stdin', line: 1 },
    });
    expect(t['Ingress/named']?.condition).toBe('AtRisk (L7Loopback) if keepalive is off on its listeners; Mitigated (KeepaliveEnabled) if keepalive is on on its listeners');
    const on = byName(report((await cli(['plan', '-f', '-', ...IPVS_18, '--keepalive', 'on', '-o', 'json'], { stdin: existing })).stdout));
    expect(on['Ingress/named']).toMatchObject({ verdict: 'Mitigated', rootCause: 'KeepaliveEnabled' });
  });

  it('reads keepalive from a TkeServiceConfig among the manifests', async () => {
    const text = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop, annotations: {kubernetes.io/ingress.subnetId: subnet-1, ingress.cloud.tencent.com/tke-service-config: web-conf}}
spec: {rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
---
apiVersion: cloud.tencent.com/v1alpha1
kind: TkeServiceConfig
metadata: {name: web-conf, namespace: shop}
spec: {loadBalancer: {l7Listeners: [{protocol: HTTP, port: 80, keepaliveEnable: 1}]}}
`;
    const t = report((await cli(['plan', '-f', '-', '-o', 'json'], { stdin: text })).stdout).targets[0];
    expect(t).toMatchObject({ verdict: 'Mitigated', rootCause: 'KeepaliveEnabled' });
    expect(t?.condition).toBeUndefined();
  });

  it('sees Ingresses naming one TkeServiceConfig together, as the operator does: an opted-out one makes the other SharedConfig', async () => {
    const ingress = (name: string, extra = '') => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ${name}, namespace: shop, annotations: {kubernetes.io/ingress.subnetId: subnet-1, ingress.cloud.tencent.com/tke-service-config: shared${extra}}}
spec: {rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
`;
    const config = `apiVersion: cloud.tencent.com/v1alpha1
kind: TkeServiceConfig
metadata: {name: shared, namespace: shop}
spec: {loadBalancer: {l7Listeners: [{protocol: HTTP, port: 80}]}}
`;
    const skipped = [ingress('front'), ingress('back', ', loopguard.dev/skip: "true"'), config].join('---\n');
    const t = byName(report((await cli(['plan', '-f', '-', '-o', 'json'], { stdin: skipped })).stdout));
    expect(t['Ingress/front']).toMatchObject({ verdict: 'Conflict', rootCause: 'SharedConfig', plan: [] });
    expect(t['Ingress/back']).toMatchObject({ verdict: 'Skipped' });
    // Both under the same (default) policy, neither opted out: the config is changed for both.
    const both = byName(report((await cli(['plan', '-f', '-', '-o', 'json'], { stdin: [ingress('front'), ingress('back'), config].join('---\n') })).stdout));
    expect(both['Ingress/front']?.rootCause).not.toBe('SharedConfig');
    expect(both['Ingress/front']?.plan.length).toBeGreaterThan(0);
  });

  it('reads directories, List objects, old Ingress shapes and the namespace flag; uses a LoopbackPolicy among the manifests', async () => {
    const dir = tmp({
      'a/list.yaml': `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: one, annotations: {${PRIVATE}}}
  spec: {type: LoadBalancer, externalTrafficPolicy: Local, ports: [{port: 80}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: skipped}
`,
      'b/ingress.json': JSON.stringify({
        apiVersion: 'extensions/v1beta1',
        kind: 'Ingress',
        metadata: { name: 'legacy', annotations: { 'kubernetes.io/ingress.subnetId': 'subnet-1' } },
        spec: { rules: [{ host: 'l.example.com', http: { paths: [{ path: '/', backend: { serviceName: 'one', servicePort: 80 } }] } }] },
      }),
      'b/policy.yml': 'apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: never, namespace: team}\nspec: {mode: Audit, l4: {preventLoopback: Never}}\n',
      'notes.txt': 'not a manifest',
    });
    const r = await cli(['plan', '-f', dir, '-n', 'team', ...IPVS_18, '-o', 'json']);
    const t = byName(report(r.stdout));
    expect(Object.keys(t).sort()).toEqual(['Ingress/legacy', 'Service/one']);
    expect(t['Service/one']).toMatchObject({ namespace: 'team', verdict: 'AtRisk', rootCause: 'MitigationDisabledByPolicy', policy: 'LoopbackPolicy team/never', source: { file: join(dir, 'a/list.yaml'), line: 4 } });
    expect(t['Ingress/legacy']?.alternatives[0]?.advice).toContain('one.team.svc.cluster.local');
  });

  it('takes the cluster profile from a saved doctor -o json, flags winning', async () => {
    const saved = { apiVersion: 'loopguard.dev/v1alpha1', kind: 'DoctorReport', clusterProfile: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.18.4-tke.19', preventLoopbackSupported: 'False', source: 'DaemonSet' } };
    const dir = tmp({ 'doctor.json': JSON.stringify(saved) });
    const from = byName(report((await cli(['plan', '-f', DEMO, '--profile-from', join(dir, 'doctor.json'), '-o', 'json'])).stdout));
    expect(from['Service/orders']?.rootCause).toBe('KubeProxyTooOld');
    const flag = byName(report((await cli(['plan', '-f', DEMO, '--profile-from', join(dir, 'doctor.json'), '--kube-proxy-version=v1.18.4-tke.20', '-o', 'json'])).stdout));
    expect(flag['Service/orders']?.rootCause).toBe('PodSourceNotMasqueraded');
  });

  it('--warn-only exits 0 on risk; markdown and yaml carry the same verdicts', async () => {
    expect((await cli(['plan', '-f', DEMO, ...IPVS_18, '--warn-only'])).code).toBe(0);
    const md = await cli(['plan', '-f', DEMO, ...IPVS_18, '-o', 'markdown']);
    expect(md.stdout).toMatch(/^### loopguard plan: 2 targets at risk of CLB loopback/);
    expect(md.stdout).toContain('| `Service loopguard-demo/orders` | config/samples/demo-workload.yaml:8 | **AtRisk** | PodSourceNotMasqueraded | 4 steps |');
    expect(md.stdout).toContain('<details><summary><code>Service loopguard-demo/orders</code>: <b>AtRisk</b>');
    const yaml = await cli(['plan', '-f', DEMO, ...IPVS_18, '-o', 'yaml']);
    expect(yaml.stdout).toContain('kind: PlanReport');
    expect(yaml.code).toBe(1);
  });

  it('fails with one line and exit 2 on what it cannot read', async () => {
    const missing = await cli(['plan', '-f', '/nonexistent/manifests.yaml']);
    expect(missing.code).toBe(2);
    expect(oneLineError(missing)).toBe('loopguard plan: cannot read manifest /nonexistent/manifests.yaml: no such file or directory');
    const broken = await cli(['plan', '-f', '-'], { stdin: 'kind: Service\nmetadata: [\n' });
    expect(broken.code).toBe(2);
    expect(oneLineError(broken)).toMatch(/^loopguard plan: cannot parse stdin line \d+: /);
    const empty = await cli(['plan', '-f', tmp({ 'x.txt': '' })]);
    expect(oneLineError(empty)).toMatch(/holds no \.yaml, \.yml or \.json file/);
    const none = await cli(['plan']);
    expect(none.code).toBe(2);
    expect(oneLineError(none)).toBe('loopguard plan: no manifests: give -f PATH (a file, a directory, or - for standard input)');
    const profile = await cli(['plan', '-f', DEMO, '--profile-from', join(tmp({ 'p.json': '{"kind":"Other"}' }), 'p.json')]);
    expect(profile.code).toBe(2);
    expect(oneLineError(profile)).toMatch(/expected the output of loopguard doctor -o json/);
    const flag = await cli(['plan', '-f', DEMO, '--kube-proxy-version', 'latest']);
    expect(flag.code).toBe(2);
    expect(oneLineError(flag)).toMatch(/expected a version such as v1\.20\.6-tke\.12/);
  });

  // Issue 22 #10: every refusal names the file; nothing reads or expands an input without bound.
  it('refuses an alias bomb and a file over the size cap, naming the file (and the cap)', async () => {
    const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) laughs.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const dir = tmp({ 'bomb.yaml': `apiVersion: v1\nkind: Service\nmetadata: {name: x}\n---\n${laughs.join('\n')}\n` });
    const bomb = await cli(['plan', '-f', join(dir, 'bomb.yaml')]);
    expect(bomb.code).toBe(2);
    expect(oneLineError(bomb)).toMatch(new RegExp(`^loopguard plan: cannot parse ${join(dir, 'bomb.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line 5: .*alias`, 'i'));

    const big = join(tmp({}), 'big.yaml');
    writeFileSync(big, `# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`);
    const tooBig = await cli(['plan', '-f', big]);
    expect(tooBig.code).toBe(2);
    expect(oneLineError(tooBig)).toBe(`loopguard plan: cannot read manifest ${big}: 10.0 MiB, over the 10 MiB limit of plan -f; give the manifests as several files or a directory`);
    const stdin = await cli(['plan', '-f', '-', '--stdin-name', 'kustomize/out.yaml'], { stdin: `# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n` });
    expect(oneLineError(stdin)).toMatch(/^loopguard plan: cannot read manifest kustomize\/out\.yaml: 10\.0 MiB, over the 10 MiB limit/);
    // A file at the cap is read.
    const atCap = join(tmp({}), 'ok.yaml');
    writeFileSync(atCap, `${annotated}# ${'x'.repeat(MAX_MANIFEST_BYTES - annotated.length - 3)}\n`);
    expect((await cli(['plan', '-f', atCap, ...IPVS_18, '-o', 'json'])).code).not.toBe(2);
  });

  it('reads standard input only up to the cap', async () => {
    await expect(readAll(Readable.from([Buffer.alloc(6), Buffer.alloc(6)]), 10)).rejects.toThrow(ManifestTooLarge);
    await expect(readAll(Readable.from([Buffer.from('abc'), Buffer.from('de')]), 10)).resolves.toBe('abcde');
  });

  it('takes the kube-proxy flags and variables exactly as the operator does (src/runtime/config.ts)', async () => {
    const saved = process.env['LOOPGUARD_KUBE_PROXY_MODE'];
    try {
      // An empty variable is unset, as for the operator (a Deployment often renders an unset value as '').
      process.env['LOOPGUARD_KUBE_PROXY_MODE'] = '';
      expect((await cli(['plan', '-f', DEMO, '-o', 'json'])).code).not.toBe(2);
      // nftables is a mode both take; one the operator refuses, the CLI refuses too, naming what is allowed.
      process.env['LOOPGUARD_KUBE_PROXY_MODE'] = 'nftables';
      const nft = report((await cli(['plan', '-f', DEMO, '-o', 'json'])).stdout);
      expect(nft.clusterProfile.kubeProxyMode).toBe('nftables');
      process.env['LOOPGUARD_KUBE_PROXY_MODE'] = 'userspace';
      const bad = await cli(['plan', '-f', DEMO]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/ipvs, iptables, nftables, none/);
    } finally {
      if (saved === undefined) delete process.env['LOOPGUARD_KUBE_PROXY_MODE'];
      else process.env['LOOPGUARD_KUBE_PROXY_MODE'] = saved;
    }
  });
});
