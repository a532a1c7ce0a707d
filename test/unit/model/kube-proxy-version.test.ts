import { describe, expect, it } from '@jest/globals';
import {
  compareKubeVersions,
  parseKubeVersion,
  preventLoopbackSupport,
  type KubeVersion,
} from '../../../src/model/kube-proxy-version.js';

describe('parseKubeVersion', () => {
  it.each([
    ['v1.20.6-tke.12', { major: 1, minor: 20, patch: 6, tke: 12 }],
    ['1.18.4-tke.20', { major: 1, minor: 18, patch: 4, tke: 20 }],
    ['v1.30.2', { major: 1, minor: 30, patch: 2 }],
    [' v1.22.5-tke.1 ', { major: 1, minor: 22, patch: 5, tke: 1 }],
  ])('%s', (tag, expected) => {
    expect(parseKubeVersion(tag)).toEqual(expected);
  });

  it.each(['latest', 'v1.20', 'v1.20.6-rc.1', 'v1.20.6-tke.', 'sha256:abc', '', 'v1.20.6-tke.12-extra'])('rejects %j', (tag) => {
    expect(parseKubeVersion(tag)).toBeUndefined();
  });
});

describe('compareKubeVersions', () => {
  const v = (s: string) => parseKubeVersion(s) as KubeVersion;
  it.each([
    ['v1.18.4-tke.20', 'v1.18.4-tke.20', 0],
    ['v1.18.4-tke.19', 'v1.18.4-tke.20', -1],
    ['v1.18.4-tke.21', 'v1.18.4-tke.20', 1],
    ['v1.18.5-tke.1', 'v1.18.4-tke.20', 1],
    ['v1.18.3-tke.99', 'v1.18.4-tke.1', -1],
    ['v1.20.0-tke.1', 'v1.18.9-tke.99', 1],
    ['v1.18.4', 'v1.18.4-tke.1', -1],
    ['v1.18.4-tke.2', 'v1.18.4-tke.10', -1],
  ])('%s vs %s', (a, b, sign) => {
    expect(Math.sign(compareKubeVersions(v(a), v(b)))).toBe(sign);
  });
});

describe('preventLoopbackSupport', () => {
  it.each([
    // exact minimums and one revision below, per minor line (TKE-LOOPBACK in tencent-cloud.md §7)
    ['v1.12.4-tke.30', 'True', undefined],
    ['v1.12.4-tke.29', 'False', 'v1.12.4-tke.30'],
    ['v1.14.3-tke.24', 'True', undefined],
    ['v1.14.3-tke.23', 'False', 'v1.14.3-tke.24'],
    ['v1.16.3-tke.25', 'True', undefined],
    ['v1.16.3-tke.24', 'False', 'v1.16.3-tke.25'],
    ['v1.18.4-tke.20', 'True', undefined],
    ['v1.18.4-tke.19', 'False', 'v1.18.4-tke.20'],
    ['v1.20.6-tke.12', 'True', undefined],
    ['v1.20.6-tke.11', 'False', 'v1.20.6-tke.12'],
    ['v1.20.6-tke.33', 'True', undefined],
    // patch decides before the revision
    ['v1.20.7-tke.1', 'True', undefined],
    ['v1.20.5-tke.40', 'False', 'v1.20.6-tke.12'],
    ['v1.18.2-tke.99', 'False', 'v1.18.4-tke.20'],
    // lines before the fix: upgrade the cluster
    ['v1.10.5-tke.20', 'False', 'v1.12.4-tke.30'],
    // later TKE lines: assumed
    ['v1.22.5-tke.1', 'True', undefined],
    ['v1.28.3-tke.3', 'True', undefined],
    ['v1.30.0-tke.1', 'True', undefined],
    // odd minors are not TKE lines: unknown
    ['v1.21.1-tke.1', 'Unknown', undefined],
    ['v1.19.3-tke.5', 'Unknown', undefined],
    // upstream builds know nothing of the annotation
    ['v1.30.2', 'False', undefined],
  ])('%s → %s', (tag, supported, upgradeTo) => {
    const s = preventLoopbackSupport(parseKubeVersion(tag));
    expect(s.supported).toBe(supported);
    expect(s.upgradeTo).toBe(upgradeTo);
    if (upgradeTo) expect(s.message).toContain(`${upgradeTo} or later`);
  });

  it('says it is an assumption for lines after 1.20', () => {
    expect(preventLoopbackSupport(parseKubeVersion('v1.24.4-tke.1')).message).toMatch(/assumed/);
  });

  it('warns about the 1.28 VIP-binding fix', () => {
    expect(preventLoopbackSupport(parseKubeVersion('v1.28.3-tke.2')).message).toMatch(/v1\.28\.3-tke\.3/);
    expect(preventLoopbackSupport(parseKubeVersion('v1.28.3-tke.3')).message).not.toMatch(/consider upgrading/);
  });

  it('explains non-TKE builds and unknown versions', () => {
    expect(preventLoopbackSupport(parseKubeVersion('v1.30.2')).message).toMatch(/not a TKE build/);
    expect(preventLoopbackSupport(undefined)).toMatchObject({ supported: 'Unknown', message: expect.stringMatching(/--kube-proxy-version/) });
  });
});
