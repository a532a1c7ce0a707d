import { describe, expect, it } from '@jest/globals';
import {
  detectClusterProfile,
  imageTag,
  kubeProxyContainer,
  readConfigMapMode,
  readKubeProxyFlags,
  type DaemonSetFacts,
  type ProfileInputs,
} from '../../../src/model/cluster-profile.js';
import { profileProjection } from '../../../src/model/status.js';
import { kubeProxyDaemonSet } from './fixtures.js';

const HYPERKUBE = 'ccr.ccs.tencentyun.com/tkeimages/hyperkube';

function ds(containers: NonNullable<NonNullable<NonNullable<DaemonSetFacts['spec']>['template']>['spec']>['containers']): DaemonSetFacts {
  return { metadata: { name: 'kube-proxy', namespace: 'kube-system' }, spec: { template: { spec: { containers } } } };
}

function cm(conf: string, key = 'config.conf') {
  return { metadata: { name: 'kube-proxy', namespace: 'kube-system' }, data: { [key]: conf } };
}

describe('imageTag', () => {
  it.each([
    [`${HYPERKUBE}:v1.20.6-tke.12`, 'v1.20.6-tke.12'],
    ['hkccr.ccs.tencentyun.com/tkeimages/hyperkube:v1.22.5-tke.1', 'v1.22.5-tke.1'],
    ['ccr.ccs.tencentyun.com/tkeimages/kube-proxy:v1.18.4-tke.20', 'v1.18.4-tke.20'],
    ['registry.k8s.io/kube-proxy:v1.30.2@sha256:0123abcd', 'v1.30.2'],
    ['localhost:5000/kube-proxy:v1.28.3-tke.3', 'v1.28.3-tke.3'],
    ['localhost:5000/kube-proxy', undefined],
    ['kube-proxy@sha256:0123', undefined],
    ['kube-proxy:', undefined],
    [undefined, undefined],
  ])('%s → %s', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });
});

describe('readKubeProxyFlags', () => {
  it.each([
    [{ command: ['kube-proxy', '--proxy-mode=ipvs'] }, 'ipvs'],
    [{ command: ['/hyperkube', 'kube-proxy'], args: ['--proxy-mode', 'ipvs', '--v=2'] }, 'ipvs'],
    [{ args: ['--proxy-mode="iptables"'] }, 'iptables'],
    [{ command: ['/bin/sh', '-c', 'exec kube-proxy --proxy-mode=ipvs --ipvs-min-sync-period=1s'] }, 'ipvs'],
    [{ args: ['--proxy-mode=iptables', '--proxy-mode=ipvs'] }, 'ipvs'],
    [{ args: ['--proxy-mode='] }, ''],
    [{ args: ['--ipvs-sync-period=30s'] }, undefined],
    [{ args: ['--proxy-mode'] }, undefined],
  ])('%j → %s', (container, mode) => {
    expect(readKubeProxyFlags(container).proxyMode).toBe(mode);
  });

  it('notices --config', () => {
    expect(readKubeProxyFlags({ args: ['--config=/var/lib/kube-proxy/config.conf'] }).config).toBe(true);
    expect(readKubeProxyFlags({ args: ['--config', '/x'] }).config).toBe(true);
    expect(readKubeProxyFlags({ args: [] }).config).toBe(false);
  });
});

describe('kubeProxyContainer', () => {
  it('prefers the container named kube-proxy, then the image, then the command', () => {
    expect(kubeProxyContainer(ds([{ name: 'sidecar', image: 'x' }, { name: 'kube-proxy', image: 'y' }]))?.image).toBe('y');
    expect(kubeProxyContainer(ds([{ name: 'sidecar', image: 'x' }, { name: 'proxy', image: `${HYPERKUBE}:v1.20.6-tke.12` }]))?.name).toBe('proxy');
    expect(kubeProxyContainer(ds([{ name: 'a', image: 'x' }, { name: 'b', image: 'y', command: ['/usr/local/bin/kube-proxy'] }]))?.name).toBe('b');
    expect(kubeProxyContainer(ds([{ name: 'a', image: 'x' }]))?.name).toBe('a');
    expect(kubeProxyContainer(undefined)).toBeUndefined();
  });
});

describe('readConfigMapMode', () => {
  it.each([
    ['apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: "ipvs"\nipvs:\n  scheduler: rr\n', 'ipvs'],
    ['kind: KubeProxyConfiguration\nmode: ""\n', ''],
    ['kind: KubeProxyConfiguration\nmode:\n', ''],
    ['kind: KubeProxyConfiguration\nipvs:\n  mode: nested-is-not-it\n', undefined],
  ])('%j → %s', (conf, mode) => {
    expect(readConfigMapMode(cm(conf)).mode).toBe(mode);
  });

  it('finds the configuration under another key and reports unparsable data', () => {
    expect(readConfigMapMode(cm('mode: ipvs\n', 'kube-proxy.yaml'))).toEqual({ mode: 'ipvs', key: 'kube-proxy.yaml' });
    expect(readConfigMapMode({ data: { 'config.conf': 'mode: [ipvs\n' } }).problem).toMatch(/not YAML/);
  });
});

interface Row {
  name: string;
  inputs: ProfileInputs;
  expect: Partial<ReturnType<typeof detectClusterProfile>>;
  message?: RegExp;
}

const rows: Row[] = [
  {
    name: 'TKE hyperkube, IPVS, supporting version',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--proxy-mode=ipvs']) },
    expect: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.20.6-tke.12', preventLoopbackSupported: 'True', vipBinding: 'OnAnnotation', source: 'DaemonSet' },
  },
  {
    name: 'TKE, IPVS as two args, too old',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.18.4-tke.19`, ['--proxy-mode', 'ipvs']) },
    expect: { kubeProxyMode: 'ipvs', preventLoopbackSupported: 'False', vipBinding: 'Never', upgradeTo: 'v1.18.4-tke.20' },
    message: /upgrade .* v1\.18\.4-tke\.20/,
  },
  {
    name: 'TKE, iptables',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--proxy-mode=iptables']) },
    expect: { kubeProxyMode: 'iptables', vipBinding: 'Never', source: 'DaemonSet' },
  },
  {
    name: 'no --proxy-mode and no config: kube-proxy default iptables',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--v=2']) },
    expect: { kubeProxyMode: 'iptables', source: 'DaemonSet' },
    message: /defaults to iptables/,
  },
  {
    name: 'kubeadm style: --config and the ConfigMap says ipvs',
    inputs: {
      daemonSet: kubeProxyDaemonSet('registry.k8s.io/kube-proxy:v1.30.2', ['--config=/var/lib/kube-proxy/config.conf']),
      configMap: cm('kind: KubeProxyConfiguration\nmode: ipvs\n'),
    },
    expect: { kubeProxyMode: 'ipvs', source: 'ConfigMap', preventLoopbackSupported: 'False', vipBinding: 'Always' },
  },
  {
    name: '--config with an empty ConfigMap mode: iptables',
    inputs: { daemonSet: kubeProxyDaemonSet('registry.k8s.io/kube-proxy:v1.30.2', ['--config=/c']), configMap: cm('mode: ""\n') },
    expect: { kubeProxyMode: 'iptables', source: 'ConfigMap' },
  },
  {
    name: '--config but no ConfigMap: unknown',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--config=/c']) },
    expect: { kubeProxyMode: 'unknown', vipBinding: 'Unknown', source: 'Unknown' },
    message: /--kube-proxy-mode/,
  },
  {
    name: 'DaemonSet flag beats the ConfigMap',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--proxy-mode=ipvs']), configMap: cm('mode: iptables\n') },
    expect: { kubeProxyMode: 'ipvs', source: 'DaemonSet' },
  },
  {
    name: 'ConfigMap only (no DaemonSet)',
    inputs: { configMap: cm('mode: ipvs\n') },
    expect: { kubeProxyMode: 'ipvs', source: 'ConfigMap', preventLoopbackSupported: 'Unknown', vipBinding: 'Unknown' },
  },
  {
    name: 'nftables',
    inputs: { daemonSet: kubeProxyDaemonSet('registry.k8s.io/kube-proxy:v1.33.1', ['--proxy-mode=nftables']) },
    expect: { kubeProxyMode: 'nftables', vipBinding: 'Never' },
  },
  {
    name: 'unsupported mode value',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--proxy-mode=userspace']) },
    expect: { kubeProxyMode: 'unknown', source: 'DaemonSet', vipBinding: 'Unknown' },
    message: /userspace/,
  },
  {
    // A name an object literal inherits is no mode either (a lookup in a plain object once returned Object for it).
    name: 'a mode value that names an Object.prototype property',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--proxy-mode=constructor']) },
    expect: { kubeProxyMode: 'unknown', source: 'DaemonSet', vipBinding: 'Unknown' },
    message: /--proxy-mode=constructor is not a mode loopguard knows/,
  },
  {
    name: 'upstream IPVS binds every LB IP',
    inputs: { daemonSet: kubeProxyDaemonSet('registry.k8s.io/kube-proxy:v1.30.2', ['--proxy-mode=ipvs']) },
    expect: { kubeProxyMode: 'ipvs', preventLoopbackSupported: 'False', vipBinding: 'Always' },
    message: /not a TKE build/,
  },
  {
    name: 'upstream IPVS before 1.11 did not bind',
    inputs: { daemonSet: kubeProxyDaemonSet('k8s.gcr.io/kube-proxy:v1.10.13', ['--proxy-mode=ipvs']) },
    expect: { vipBinding: 'Never' },
  },
  {
    name: 'IPVS with an untagged image',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:latest`, ['--proxy-mode=ipvs']) },
    expect: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'latest', preventLoopbackSupported: 'Unknown', vipBinding: 'Unknown' },
    message: /not vX\.Y\.Z/,
  },
  {
    name: 'nothing at all: unknown',
    inputs: {},
    expect: { kubeProxyMode: 'unknown', preventLoopbackSupported: 'Unknown', vipBinding: 'Unknown', source: 'Unknown' },
    message: /node binary.*on DataPlaneV2, where Cilium replaces kube-proxy: --kube-proxy-mode=none/,
  },
  {
    name: 'flags override everything',
    inputs: {
      daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.18.4-tke.1`, ['--proxy-mode=iptables']),
      flags: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.20.6-tke.15' },
    },
    expect: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.20.6-tke.15', preventLoopbackSupported: 'True', vipBinding: 'OnAnnotation', source: 'Flag' },
  },
  {
    name: 'flag: prevent-loopback supported despite an odd version',
    inputs: { daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.21.1-tke.3`, ['--proxy-mode=ipvs']), flags: { kubeProxyPreventLoopback: true } },
    expect: { kubeProxyMode: 'ipvs', preventLoopbackSupported: 'True', vipBinding: 'OnAnnotation', source: 'DaemonSet' },
  },
  {
    name: 'flag: prevent-loopback not supported, no version',
    inputs: { flags: { kubeProxyMode: 'ipvs', kubeProxyPreventLoopback: 'false' } },
    expect: { kubeProxyMode: 'ipvs', preventLoopbackSupported: 'False', vipBinding: 'Never', source: 'Flag' },
  },
  {
    name: 'flag: mode none',
    inputs: { flags: { kubeProxyMode: 'none' } },
    expect: { kubeProxyMode: 'none', preventLoopbackSupported: 'False', vipBinding: 'Never', source: 'Flag' },
  },
  {
    name: 'hyperkube container found by image when not named kube-proxy',
    inputs: {
      daemonSet: ds([
        { name: 'log-agent', image: 'fluent:1' },
        { name: 'proxy', image: `${HYPERKUBE}:v1.16.3-tke.25`, command: ['/hyperkube', 'kube-proxy', '--proxy-mode=ipvs'] },
      ]),
    },
    expect: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.16.3-tke.25', preventLoopbackSupported: 'True' },
  },
];

describe('detectClusterProfile', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const p = detectClusterProfile(row.inputs);
    expect(p).toMatchObject(row.expect);
    if (row.message) expect(p.message).toMatch(row.message);
    expect(p.message.length).toBeGreaterThan(0);
  });

  it('projects to the status shape', () => {
    const p = detectClusterProfile({ daemonSet: kubeProxyDaemonSet(`${HYPERKUBE}:v1.20.6-tke.12`, ['--proxy-mode=ipvs']) });
    expect(profileProjection(p)).not.toHaveProperty('version');
    expect(profileProjection(p)).toMatchObject({ kubeProxyMode: 'ipvs', source: 'DaemonSet' });
  });
});
