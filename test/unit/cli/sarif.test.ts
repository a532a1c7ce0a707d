// `loopguard plan -o sarif` is valid SARIF 2.1.0: checked against the OASIS JSON schema vendored from an npm package
// (test/fixtures/sarif/README.md names it), with formats (uri, uri-reference, date-time) checked too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import type { Log } from 'sarif';
import { REPO_ROOT } from '../../controlplane/crds.js';
import { uriReference } from '../../../src/cli/output/sarif.js';
import { cli } from './run.js';

const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/sarif/sarif-2.1.0-rtm.5.json'), 'utf8')) as Record<string, unknown>;

function validator() {
  // CommonJS modules seen from ESM: the class and the plugin are their `default` exports.
  const AjvClass = ajvDraft04.default;
  const formats = ajvFormats.default;
  // unicodeRegExp: false — the schema's `language` pattern has a stray `]` that only the non-unicode RegExp syntax (what
  // JSON Schema draft-04 validators used) accepts.
  const ajv = new AjvClass({ allErrors: true, strict: false, unicodeRegExp: false });
  formats(ajv);
  return ajv.compile(schema);
}

const IPVS_18 = ['--kube-proxy-mode=ipvs', '--kube-proxy-version=v1.18.4-tke.20'];

describe('SARIF output', () => {
  const validate = validator();

  it('validates against the SARIF 2.1.0 schema and flags the at-risk targets at their manifest lines', async () => {
    const r = await cli(['plan', '-f', 'config/samples/demo-workload.yaml', ...IPVS_18, '-o', 'sarif']);
    expect(r.code).toBe(1);
    const log = JSON.parse(r.stdout) as Log;
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // The validator does reject what is not SARIF 2.1.0.
    expect(validate({ ...log, version: '2.0.0' })).toBe(false);
    expect(validate({ ...log, runs: [{ ...log.runs[0], results: [{ message: {} }] }] })).toBe(false);
    expect(log.version).toBe('2.1.0');
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('loopguard');
    expect(run.tool.driver.rules?.map((x) => x.id)).toEqual(['L7Loopback', 'PodSourceNotMasqueraded']);
    const results = run.results ?? [];
    expect(results.map((x) => [x.ruleId, x.level, x.locations?.[0]?.physicalLocation?.region?.startLine])).toEqual([
      ['L7Loopback', 'error', 52],
      ['PodSourceNotMasqueraded', 'error', 8],
    ]);
    expect(results[1]?.locations?.[0]?.physicalLocation?.artifactLocation?.uri).toBe('config/samples/demo-workload.yaml');
    expect(results[1]?.message.text).toContain('Service loopguard-demo/orders');
    expect(results[1]?.partialFingerprints).toEqual({ 'loopguardTarget/v1': 'Service/loopguard-demo/orders/PodSourceNotMasqueraded' });
  });

  it('marks a conditional risk as a warning and stays valid with stdin, odd names and no results', async () => {
    const svc = `apiVersion: v1
kind: Service
metadata: {name: a, namespace: "n", annotations: {service.kubernetes.io/qcloud-loadbalancer-internal-subnetid: s, service.cloud.tencent.com/prevent-loopback: "true"}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`;
    const r = await cli(['plan', '-f', '-', '--stdin-name', 'rendered manifests/all#1.yaml', ...IPVS_18, '-o', 'sarif'], { stdin: svc });
    const log = JSON.parse(r.stdout) as Log;
    expect(validate(log)).toBe(true);
    expect(log.runs[0]?.results?.[0]).toMatchObject({ ruleId: 'VipHealthCheckDropped', level: 'warning' });
    expect(log.runs[0]?.results?.[0]?.locations?.[0]?.physicalLocation?.artifactLocation?.uri).toBe('rendered%20manifests/all%231.yaml');

    const none = await cli(['plan', '-f', '-', '--kube-proxy-mode=iptables', '-o', 'sarif'], { stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' });
    expect(none.code).toBe(0);
    const empty = JSON.parse(none.stdout) as Log;
    expect(validate(empty)).toBe(true);
    expect(empty.runs[0]?.results).toEqual([]);
  });

  it('writes paths as URI references', () => {
    expect(uriReference('a b\\c/d#e.yaml')).toBe('a%20b/c/d%23e.yaml');
  });
});
