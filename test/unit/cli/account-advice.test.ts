// `loopguard doctor` on the account's default health-check source (src/cli/account-advice.ts over
// src/model/account-default.ts): the judgement it prints, the console's bulk switch where listeners still use the VIP,
// and the note on a Service whose listeners already use 100.64 by default.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import { renderMarkdown } from '../../../src/cli/output/markdown.js';
import { renderTable } from '../../../src/cli/output/table.js';
import { scanReport } from '../../../src/cli/scan.js';
import { REPO_ROOT } from '../../controlplane/crds.js';
import { clb, l4Listener, PROFILES } from '../model/fixtures.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const BULK = 'one-shot alternative for the existing listeners: the CLB console\'s Tools > "Verifying health check source IPs"';

/** An at-risk Service (IPVS, ETP Local) with a TCP and a UDP port on its own private CLB lb-<name>. */
function service(name: string, annotations: Record<string, string> = {}): V1Service {
  return {
    metadata: { namespace: 'shop', name, uid: `uid-${name}`, annotations: { 'service.kubernetes.io/loadbalance-id': `lb-${name}`, ...annotations } },
    spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] },
    status: { loadBalancer: { ingress: [{ ip: '10.0.0.10' }] } },
  };
}

/** Each Service's CLB, its two listeners on the source given. */
function scan(services: [V1Service, 0 | 1][], records: LoopbackRecord[] = []) {
  const observations = new Map(
    services.map(([s, source]) => {
      const id = `lb-${s.metadata?.name ?? ''}`;
      return [id, { state: 'Found' as const, clb: clb({ loadBalancerId: id, listeners: [l4Listener(`${id}-tcp`, 'TCP', 80, source), l4Listener(`${id}-udp`, 'UDP', 53, source)] }) }];
    }),
  );
  return scanReport({
    snapshot: { services: services.map(([s]) => s), ingresses: [], tkeServiceConfigs: [], records, policies: [], notes: [] },
    profile: PROFILES.ipvsNew,
    observations,
    observedAt: new Map([...observations.keys()].map((id) => [id, 0])),
    now: new Date(0),
  });
}

describe('doctor: the account default health-check source', () => {
  it('100.64 on the listeners TKE created: the account default, nothing for Enforce to switch on them', () => {
    const report = scan([
      [service('web'), 1],
      [service('bound', { [PREVENT]: 'true' }), 1],
    ]);
    expect(report.account).toMatchObject({ source: 'Range100_64', listeners: { range100_64: 2, vip: 0 } });
    const text = renderTable(report, false);
    expect(text).toMatch(/\naccount: new listeners get the 100\.64\.0\.0\/10 health-check source \(seen on 2 listeners that TKE created for Services that neither ask for prevent-loopback nor were changed by loopguard, none on the VIP\), the default of accounts new to CLB since 2023-02-24 \(https:\/\/www\.tencentcloud\.com\/document\/product\/214\/53639\); Enforce has no health-check source to switch on those listeners/);
    expect(text).not.toContain(BULK);
    // web's plan only annotates, and its details say why there is no switch; bound (TKE switched it) gets no note.
    const web = report.targets.find((t) => t.name === 'web');
    expect(web?.plan).toEqual(['annotate service.cloud.tencent.com/prevent-loopback: "true"; record 1 applied field(s) (LoopbackRecord)']);
    expect(web?.advice).toContain("health checks of its listeners already come from 100.64.0.0/10, the account's default for new listeners (https://www.tencentcloud.com/document/product/214/53639): Enforce has no source to switch here");
    expect(report.targets.find((t) => t.name === 'bound')?.advice.some((a) => a.includes('default'))).toBe(false);
    expect(text).toContain("  Note: health checks of its listeners already come from 100.64.0.0/10, the account's default");
    expect(renderMarkdown(report)).toContain('> account: new listeners get the 100.64.0.0/10 health-check source');
    // docs/doctor.md's example shows these very lines.
    const doc = readFileSync(join(REPO_ROOT, 'docs/doctor.md'), 'utf8');
    for (const line of text.split('\n').filter((l) => l.startsWith('account: ') || l.includes('Note: health checks of its listeners'))) expect(doc).toContain(`\n${line}\n`);
  });

  it('the VIP on the listeners TKE created: an older account, and the console bulk switch with what it leaves', () => {
    const report = scan([[service('web'), 0]]);
    expect(report.account).toMatchObject({ source: 'Vip', listeners: { range100_64: 0, vip: 2 } });
    const lines = renderTable(report, false).split('\n').filter((l) => l.startsWith('account: '));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^account: new listeners get the CLB VIP as health-check source \(seen on 2 listeners .*, none on 100\.64\.0\.0\/10\), the default of accounts that used CLB before 2023-02-24 \(https:\/\/www\.tencentcloud\.com\/document\/product\/214\/53639\)/);
    expect(lines[1]).toContain(`account: ${BULK} checks the CLBs of a region and switches those health-checked from the VIP to 100.64.0.0/10 (https://www.tencentcloud.com/document/product/214/54823`);
    expect(lines[1]).toContain('it does not change what listeners created later get (on this account: the VIP)');
    expect(lines[1]).toContain('a Service at risk of loopback still needs prevent-loopback');
    expect(report.targets[0]?.advice.some((a) => a.includes("account's default"))).toBe(false);
  });

  it('mixed or too few: not known; the bulk switch still named where listeners use the VIP', () => {
    const mixed = scan([
      [service('a'), 0],
      [service('b'), 1],
    ]);
    expect(mixed.account?.source).toBe('Unknown');
    expect(mixed.account?.advice[0]).toBe('the health-check source new listeners get is not known (2 listeners on 100.64.0.0/10 and 2 listeners on the VIP: some were switched, by whom is not known)');
    expect(mixed.account?.advice[1]).toContain(BULK);
    expect(mixed.targets.every((t) => !t.advice.some((a) => a.includes("account's default")))).toBe(true);

    // Every Service annotated or recorded: no witness.
    const record = { apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackRecord', metadata: { name: 'service.shop.b' }, spec: { target: { kind: 'Service', namespace: 'shop', name: 'b', uid: 'uid-b' }, policy: { namespace: 'shop', name: 'p' }, originals: {} } } as LoopbackRecord;
    const none = scan(
      [
        [service('a', { [PREVENT]: 'true' }), 0],
        [service('b'), 0],
      ],
      [record],
    );
    expect(none.account?.advice).toEqual(['the health-check source new listeners get is not known (0 listeners that TKE created for Services that neither ask for prevent-loopback nor were changed by loopguard, too few to tell)']);
  });
});
