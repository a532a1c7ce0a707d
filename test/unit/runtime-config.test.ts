import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig, parseDuration } from '../../src/runtime/config.js';

const base = { TENCENTCLOUD_REGION: 'ap-guangzhou' };

describe('operator configuration', () => {
  it('uses defaults, then environment, then flags (flags win)', () => {
    // The defaults the README's flag table and probe section promise.
    expect(loadConfig([], base)).toMatchObject({
      region: 'ap-guangzhou',
      cloudRateLimit: 10,
      driftCheckIntervalMs: 300_000,
      kubeProxyMode: '',
      kubeProxyVersion: '',
      kubeProxyPreventLoopback: '',
      probePort: 8081,
      leaderElect: true,
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
    expect(problems).toContain('LOOPGUARD_KUBE_PROXY_MODE="userspace": must be one of ipvs, iptables, none');
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
});
