import { describe, expect, it } from '@jest/globals';
import { CLIENT_NODE_IN_CLUSTER, ConfigError, DEFAULT_DNS_UPSTREAM, parseDnsServers, detectRuntimeEnvironment, loadConfig, parseDuration, resolveRuntimeDefaults, usage, NO_NAMESPACE_PROBLEM } from '../../src/runtime/config.js';

const base = { TENCENTCLOUD_REGION: 'ap-guangzhou' };

describe('operator configuration', () => {
  it('uses defaults, then environment, then flags (flags win)', () => {
    // The defaults docs/operating.md's flag table and probe section promise.
    expect(loadConfig([], base)).toMatchObject({
      region: 'ap-guangzhou',
      cloudRateLimit: 10,
      driftCheckIntervalMs: 300_000,
      kubeProxyMode: '',
      kubeProxyVersion: '',
      kubeProxyPreventLoopback: '',
      probePort: 8081,
      leaderElect: true,
      shutdownGraceMs: 8_000,
    });
    const c = loadConfig(['--concurrency=8', '--drift-check-interval', '90s', '--leader-elect=false', '--log-level', 'debug'], {
      ...base,
      LOOPGUARD_CONCURRENCY: '2',
      LOOPGUARD_CLB_ENDPOINT: '127.0.0.1:9000',
      LOOPGUARD_CLB_PROTOCOL: 'http://',
    });
    expect(c.concurrency).toBe(8);
    expect(c.driftCheckIntervalMs).toBe(90_000);
    expect(c.leaderElect).toBe(false);
    expect(c.logLevel).toBe('debug');
    expect(c.clbEndpoint).toBe('127.0.0.1:9000');
    expect(c.clbProtocol).toBe('http://');
  });

  it('--probe-window: the probe plan\'s window, 5m by default, at most the 1h the agents accept', () => {
    expect(loadConfig([], base).probeWindowMs).toBe(300_000);
    expect(loadConfig(['--probe-window=5s'], base).probeWindowMs).toBe(5_000);
    expect(() => loadConfig(['--probe-window=2h'], base)).toThrow(/--probe-window.*must be at most 3600000 ms/s);
  });

  it('--kube-proxy-prevent-loopback, which diagnosis messages point to, is a flag with true/false', () => {
    expect(loadConfig(['--kube-proxy-prevent-loopback=true'], base).kubeProxyPreventLoopback).toBe('true');
    expect(() => loadConfig(['--kube-proxy-prevent-loopback=maybe'], base)).toThrow(/must be one of true, false/);
  });

  it('a bare boolean flag means true', () => {
    expect(loadConfig(['--leader-elect'], { ...base, LOOPGUARD_LEADER_ELECT: 'false' }).leaderElect).toBe(true);
  });

  it('reports every problem at once, naming the flag or variable and what is allowed', () => {
    let err: unknown;
    try {
      loadConfig(['--concurrency=0', '--bogus=1', '--cloud-rate-limit=50', 'stray'], {
        LOOPGUARD_DRIFT_CHECK_INTERVAL: 'soon',
        LOOPGUARD_KUBE_PROXY_MODE: 'userspace',
        LOOPGUARD_KUBE_PROXY_VERSION: '1.20',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toContain('--concurrency="0": must be between 1 and 64');
    expect(problems).toContain('unknown flag --bogus');
    expect(problems).toContain('--cloud-rate-limit="50": must be between 1 and 20');
    expect(problems).toContain('unexpected argument "stray"');
    expect(problems).toContain('LOOPGUARD_DRIFT_CHECK_INTERVAL="soon": must be a duration');
    expect(problems).toContain('LOOPGUARD_KUBE_PROXY_MODE="userspace": must be one of ipvs, iptables, nftables, none');
    expect(problems).toContain('no region');
    expect(problems).toContain('expected a version such as v1.20.6-tke.12');
    expect((err as ConfigError).problems).toHaveLength(8);
  });

  it('parses durations', () => {
    expect(parseDuration('1500ms')).toBe(1500);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('5 minutes')).toBeUndefined();
  });

  describe('defaults that depend on where loopguard runs', () => {
    const resolve = (argv: string[], env: NodeJS.ProcessEnv, where: Parameters<typeof resolveRuntimeDefaults>[1]) => {
      const c = loadConfig(argv, { ...base, ...env });
      const notes = resolveRuntimeDefaults(c, where);
      return { namespace: c.namespace, probeHost: c.probeHost, notes };
    };

    it("out of cluster loopguard's namespace is never guessed: without --namespace it is an error naming the flag", () => {
      // Neither the kubeconfig context's namespace (the user's working namespace) nor default (issue 38 #3): out of
      // cluster the context does not reach the defaults at all (detectRuntimeEnvironment, below, keeps it to itself).
      let err: unknown;
      try {
        resolve([], {}, {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([NO_NAMESPACE_PROBLEM]);
      expect(NO_NAMESPACE_PROBLEM).toMatch(/set --namespace or LOOPGUARD_NAMESPACE/);
    });

    it("in a pod loopguard's namespace is the pod's own, whatever the kubeconfig context says", () => {
      const r = resolve([], {}, { serviceAccountNamespace: 'loopguard-system\n' });
      expect(r.namespace).toBe('loopguard-system');
      expect(r.notes.namespaceFrom).toContain("pod's own namespace");
    });

    it('an explicit flag or variable always wins; the flag over the variable, the primary names over the aliases', () => {
      const pod = { serviceAccountNamespace: 'loopguard-system' };
      expect(resolve(['--namespace=flag'], { LOOPGUARD_NAMESPACE: 'env' }, pod).namespace).toBe('flag');
      expect(resolve([], { LOOPGUARD_NAMESPACE: 'env', LOOPGUARD_LEASE_NAMESPACE: 'old-env', POD_NAMESPACE: 'downward' }, pod).namespace).toBe('env');
      expect(resolve([], { LOOPGUARD_LEASE_NAMESPACE: 'old-env', POD_NAMESPACE: 'downward' }, pod).namespace).toBe('old-env');
      expect(resolve([], { POD_NAMESPACE: 'downward' }, {}).namespace).toBe('downward');
      // The earlier flag names (the chart's operator.leaseNamespace, controller-runtime's spelling) still work.
      expect(resolve(['--lease-namespace=lease'], {}, pod).namespace).toBe('lease');
      expect(resolve(['--leader-election-namespace', 'old'], {}, pod).namespace).toBe('old');
      expect(resolve(['--namespace=new', '--lease-namespace=lease', '--leader-election-namespace=old'], {}, pod).namespace).toBe('new');
      expect(resolve(['--lease-namespace=lease'], { LOOPGUARD_NAMESPACE: 'env' }, pod).namespace).toBe('lease');
      // An empty variable is unset, as for every other variable.
      expect(resolve([], { LOOPGUARD_NAMESPACE: '' }, pod).namespace).toBe('loopguard-system');
      expect(resolve(['--namespace=x'], {}, {}).notes.namespaceFrom).toMatch(/^set by --namespace/);
    });

    it('the probe server listens on loopback out of cluster and on every interface in a pod, unless told', () => {
      expect(resolve(['--namespace=lg'], {}, {}).probeHost).toBe('127.0.0.1');
      expect(resolve([], {}, { serviceAccountNamespace: 'loopguard-system' }).probeHost).toBe('0.0.0.0');
      expect(resolve(['--probe-host=10.0.0.1', '--namespace=lg'], {}, {}).probeHost).toBe('10.0.0.1');
    });

    // Issue 22 #6: /metrics names every tenant's targets; in a pod only authorized ServiceAccounts read it.
    it('metrics are authenticated HTTPS in a pod and on the probe port out of cluster, unless told', () => {
      const secure = (argv: string[], env: NodeJS.ProcessEnv, where: Parameters<typeof resolveRuntimeDefaults>[1]) => {
        const c = loadConfig(argv, { TENCENTCLOUD_REGION: 'ap-guangzhou', ...env });
        const notes = resolveRuntimeDefaults(c, where);
        return { secure: c.metricsSecure, from: notes.metricsSecureFrom, port: c.metricsPort };
      };
      expect(secure([], {}, { serviceAccountNamespace: 'loopguard-system' })).toEqual({ secure: true, from: 'in a pod: authenticated HTTPS', port: 8443 });
      expect(secure(['--namespace=lg'], {}, {})).toMatchObject({ secure: false, from: 'out of cluster: on the probe port' });
      expect(secure(['--metrics-secure=false'], {}, { serviceAccountNamespace: 'loopguard-system' })).toMatchObject({ secure: false, from: expect.stringMatching(/^set by/) });
      expect(secure([], { LOOPGUARD_METRICS_SECURE: 'true', LOOPGUARD_METRICS_PORT: '9443', LOOPGUARD_NAMESPACE: 'lg' }, {})).toEqual({ secure: true, from: expect.stringMatching(/^set by/), port: 9443 });
      expect(() => loadConfig(['--metrics-port=70000'], { TENCENTCLOUD_REGION: 'r' })).toThrow(/--metrics-port="70000": must be between 0 and 65535/);
    });

    describe("in a pod or not: only client-node's in-cluster config, with no kubeconfig given, is a pod", () => {
      // What client-node's loadFromCluster loads; its namespace is the ServiceAccount file's.
      const inClusterContext = { name: CLIENT_NODE_IN_CLUSTER.context, cluster: CLIENT_NODE_IN_CLUSTER.cluster, user: CLIENT_NODE_IN_CLUSTER.user, namespace: 'ci-runners\n' };
      const devContext = { name: 'dev', cluster: 'dev', user: 'dev', namespace: 'team-a' };
      const start = (argv: string[], env: NodeJS.ProcessEnv, context: typeof devContext | undefined) => {
        const c = loadConfig(argv, { ...base, ...env });
        resolveRuntimeDefaults(c, detectRuntimeEnvironment({ kubeconfig: c.kubeconfig, kubeconfigEnv: env['KUBECONFIG'], ...(context ? { context } : {}) }));
        return { namespace: c.namespace, probeHost: c.probeHost };
      };

      it('in a pod with no kubeconfig: the pod namespace and every interface', () => {
        expect(start([], {}, inClusterContext)).toEqual({ namespace: 'ci-runners', probeHost: '0.0.0.0' });
      });

      it('npm start in a dev container or CI pod with KUBECONFIG or --kubeconfig: the context namespace and loopback', () => {
        const dev = { LOOPGUARD_NAMESPACE: 'loopguard-system' }; // what .dev/env exports
        expect(start([], { ...dev, KUBECONFIG: '/work/.dev/kubeconfig' }, devContext)).toEqual({ namespace: 'loopguard-system', probeHost: '127.0.0.1' });
        expect(start(['--kubeconfig=/work/.dev/kubeconfig', '--namespace=lg'], {}, devContext)).toEqual({ namespace: 'lg', probeHost: '127.0.0.1' });
        expect(() => start([], { KUBECONFIG: '/work/.dev/kubeconfig' }, devContext)).toThrow(ConfigError);
        // Even a kubeconfig that points at the ServiceAccount like client-node does is a kubeconfig given.
        expect(() => start([], { KUBECONFIG: '/tmp/sa.kubeconfig' }, inClusterContext)).toThrow(ConfigError);
        expect(start([], { KUBECONFIG: '/tmp/sa.kubeconfig', POD_NAMESPACE: 'ci-runners' }, inClusterContext)).toEqual({ namespace: 'ci-runners', probeHost: '127.0.0.1' });
      });

      it('in a pod with ~/.kube/config (client-node did not fall back to in-cluster): out of cluster', () => {
        expect(() => start([], {}, devContext)).toThrow(ConfigError);
        expect(() => start([], {}, undefined)).toThrow(ConfigError);
        expect(start(['--namespace=lg'], {}, undefined)).toEqual({ namespace: 'lg', probeHost: '127.0.0.1' });
      });

      it('the decision itself', () => {
        expect(detectRuntimeEnvironment({ kubeconfig: '', kubeconfigEnv: undefined, context: inClusterContext })).toEqual({ serviceAccountNamespace: 'ci-runners' });
        expect(detectRuntimeEnvironment({ kubeconfig: '', kubeconfigEnv: '', context: inClusterContext }).serviceAccountNamespace).toBe('ci-runners');
        expect(detectRuntimeEnvironment({ kubeconfig: '/k', kubeconfigEnv: undefined, context: inClusterContext })).not.toHaveProperty('serviceAccountNamespace');
        expect(detectRuntimeEnvironment({ kubeconfig: '', kubeconfigEnv: '/k', context: inClusterContext })).not.toHaveProperty('serviceAccountNamespace');
        // The in-cluster context's name alone is not client-node's in-cluster config: the context namespace goes nowhere.
        expect(detectRuntimeEnvironment({ kubeconfig: '', kubeconfigEnv: undefined, context: { ...devContext, name: 'inClusterContext' } })).toEqual({});
      });
    });

    it('--help names the aliases', () => {
      expect(usage()).toMatch(/--namespace .*LOOPGUARD_NAMESPACE.*\(also: --lease-namespace, --leader-election-namespace, LOOPGUARD_LEASE_NAMESPACE, POD_NAMESPACE\)/);
    });
  });

  describe('CLB endpoint and protocol', () => {
    it('an endpoint does not stand in for the region (a VPC endpoint serves one region; guessing acts on the wrong CLBs)', () => {
      expect(() => loadConfig([], { LOOPGUARD_CLB_ENDPOINT: '127.0.0.1:9000' })).toThrow(/no region/);
    });

    it('a scheme in the endpoint becomes the protocol (the emulator speaks http://)', () => {
      const c = loadConfig([], { TENCENTCLOUD_REGION: 'ap-guangzhou', LOOPGUARD_CLB_ENDPOINT: 'http://127.0.0.1:9000' });
      expect([c.clbEndpoint, c.clbProtocol]).toEqual(['127.0.0.1:9000', 'http://']);
    });

    it('the protocol is https:// by default and accepts http or http://', () => {
      expect(loadConfig([], { TENCENTCLOUD_REGION: 'ap-guangzhou', LOOPGUARD_CLB_ENDPOINT: '127.0.0.1:9000' }).clbProtocol).toBe('https://');
      expect(loadConfig(['--clb-protocol=http'], { TENCENTCLOUD_REGION: 'ap-guangzhou', LOOPGUARD_CLB_ENDPOINT: '127.0.0.1:9000' }).clbProtocol).toBe('http://');
      expect(loadConfig([], { TENCENTCLOUD_REGION: 'ap-guangzhou', LOOPGUARD_CLB_ENDPOINT: '127.0.0.1:9000', LOOPGUARD_CLB_PROTOCOL: 'http://' }).clbProtocol).toBe('http://');
    });

    it('refuses a scheme that contradicts the protocol, and a path', () => {
      expect(() => loadConfig(['--clb-protocol=https://'], { LOOPGUARD_CLB_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(/says http:\/\/ but --clb-protocol/);
      expect(() => loadConfig([], { LOOPGUARD_CLB_ENDPOINT: '127.0.0.1:9000/api' })).toThrow(/expected host\[:port\] or http\(s\):\/\/host\[:port\]/);
    });
  });

  describe('the settings of l7.inClusterDNS (docs/dns.md)', () => {
    it('defaults: the VPC DNS upstream, kube-dns (empty), 150 s, cluster.local', () => {
      expect(loadConfig([], base)).toMatchObject({ dnsUpstream: DEFAULT_DNS_UPSTREAM, corednsServers: '', dnsCheckWaitMs: 150_000, clusterDomain: 'cluster.local' });
      expect(parseDnsServers(DEFAULT_DNS_UPSTREAM)).toEqual({ servers: ['183.60.83.19', '183.60.82.98'] });
    });

    // [text, servers or the entry refused]
    const cases: [string, { servers: string[] } | { bad: string }][] = [
      ['127.0.0.1:5353, 10.0.0.2', { servers: ['127.0.0.1:5353', '10.0.0.2'] }],
      ['[fd00::a]:53,fd00::b', { servers: ['[fd00::a]:53', 'fd00::b'] }],
      ['', { servers: [] }],
      ['dns.example.com', { bad: 'dns.example.com' }],
      ['10.0.0.256', { bad: '10.0.0.256' }],
      ['10.0.0.2:0', { bad: '10.0.0.2:0' }],
      ['10.0.0.2:53 10.0.0.3', { bad: '10.0.0.2:53 10.0.0.3' }],
    ];
    it.each(cases)('parses %j', (text, expected) => {
      expect(parseDnsServers(text)).toEqual(expected);
    });

    it('refuses a bad server list, an empty upstream and a bad cluster domain, naming the flag', () => {
      expect(() => loadConfig(['--dns-upstream=resolver.local'], base)).toThrow(/--dns-upstream="resolver.local" \(LOOPGUARD_DNS_UPSTREAM\): "resolver.local" is not an IP address/);
      expect(() => loadConfig(['--dns-upstream=,'], base)).toThrow(/--dns-upstream \(LOOPGUARD_DNS_UPSTREAM\) is empty/);
      expect(() => loadConfig([], { ...base, LOOPGUARD_COREDNS_SERVERS: 'kube-dns' })).toThrow(/--coredns-servers="kube-dns"/);
      expect(() => loadConfig(['--cluster-domain=Cluster.Local'], base)).toThrow(/--cluster-domain="Cluster.Local"/);
      expect(loadConfig(['--coredns-servers=127.0.0.1:5353', '--dns-check-wait=20s', '--cluster-domain=corp.internal'], base)).toMatchObject({ corednsServers: '127.0.0.1:5353', dnsCheckWaitMs: 20_000, clusterDomain: 'corp.internal' });
    });
  });
});
