// What a user sees when the operator cannot act: one line with cause and fix (no HTTP header dumps), whether
// it is fatal at start-up or retried while /readyz is false, and that /readyz recovers by itself.
import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import SdkExceptionModule from 'tencentcloud-sdk-nodejs/tencentcloud/common/exception/tencent_cloud_sdk_exception.js';
import { CredentialsError, toClbError } from '../../src/cloud/errors.js';
import { CloudHealth, judgeProbeFailure } from '../../src/runtime/cloud-health.js';
import { kubeErrorMessage, scrubApiExceptionText, scrubLogValue } from '../../src/runtime/kube-errors.js';
import { describeLeaseFailure } from '../../src/runtime/leader-election.js';

const SdkException = (SdkExceptionModule as unknown as { default: new (msg: string, requestId?: string, traceId?: string) => Error & { code?: string } }).default;

function apiError(code: string, message: string): Error {
  const e = new SdkException(message, 'req-1', 'trace-1');
  e.code = code;
  return e;
}

/** What client-node 2.x throws for a 404 on create: the Status JSON as text, and every response header. */
function namespaceNotFound(): ApiException<unknown> {
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'namespaces "loopguard-system" not found',
    reason: 'NotFound',
    details: { name: 'loopguard-system', kind: 'namespaces' },
    code: 404,
  };
  return new ApiException(404, 'Unknown API Status Code!', JSON.stringify(status), {
    'audit-id': '0b8a4c5e',
    'content-type': 'application/json',
    'x-kubernetes-pf-flowschema-uid': 'f1c2',
    date: 'Sun, 22 Nov 2026 10:00:00 GMT',
  });
}

const EPROTO =
  'request to https://127.0.0.1:41711/ failed, reason: write EPROTO 40BD2A940B7F0000:error:0A00010B:SSL routines:' +
  'tls_validate_record_header:wrong version number:../deps/openssl/openssl/ssl/record/methods/tlsany_meth.c:77:\n';

describe('apiserver errors in logs', () => {
  it('keep the status code and the apiserver message, never the headers', () => {
    const err = namespaceNotFound();
    expect(err.message).toContain('Headers:');
    expect(kubeErrorMessage(err)).toBe('HTTP 404: namespaces "loopguard-system" not found');
    expect(scrubApiExceptionText(`Informer failed: ${err.message}`)).toBe('Informer failed: HTTP 404: namespaces "loopguard-system" not found');
    expect(kubeErrorMessage(new ApiException(401, 'Unauthorized', undefined, { date: 'x' }))).toBe('HTTP 401');
  });

  it('scrubs dumps anywhere in a log entry, leaving other values alone', () => {
    const when = new Date(0);
    const entry = scrubLogValue({ error: namespaceNotFound().message, nested: { err: namespaceNotFound() }, when, n: 1 }) as Record<string, unknown>;
    expect(JSON.stringify(entry)).not.toContain('audit-id');
    expect(entry['error']).toBe('HTTP 404: namespaces "loopguard-system" not found');
    expect(entry['when']).toBe(when);
    expect(entry['n']).toBe(1);
  });
});

describe('Lease failures', () => {
  it('a missing namespace is not transient and names the fix', () => {
    const f = describeLeaseFailure(namespaceNotFound(), 'create', 'loopguard-system', 'loopguard-leader');
    expect(f.transient).toBe(false);
    expect(f.message).toBe(
      'Cannot create Lease loopguard-system/loopguard-leader: namespace "loopguard-system" does not exist ' +
        '(HTTP 404: namespaces "loopguard-system" not found). Fix: kubectl create namespace loopguard-system, ' +
        'or point --namespace (LOOPGUARD_NAMESPACE) at a namespace that exists.',
    );
  });

  it('a 404 is a missing namespace only when the Status names a namespace (details.kind or message)', () => {
    const messageOnly = new ApiException(404, 'Unknown API Status Code!', JSON.stringify({ kind: 'Status', message: 'namespaces "ns" not found', code: 404 }), {});
    for (const err of [namespaceNotFound(), messageOnly]) {
      for (const step of ['create', 'update'] as const) {
        expect(describeLeaseFailure(err, step, 'ns', 'l')).toMatchObject({ transient: false, message: expect.stringContaining('kubectl create namespace ns') });
      }
    }
  });

  it('a 404 naming the Lease on update is transient: it was deleted meanwhile, the next attempt re-reads and creates it', () => {
    const leaseGone = new ApiException(
      404,
      'Unknown API Status Code!',
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'leases.coordination.k8s.io "loopguard-leader" not found',
        reason: 'NotFound',
        details: { name: 'loopguard-leader', group: 'coordination.k8s.io', kind: 'leases' },
        code: 404,
      }),
      { 'audit-id': 'x' },
    );
    const f = describeLeaseFailure(leaseGone, 'update', 'loopguard-system', 'loopguard-leader');
    expect(f.transient).toBe(true);
    expect(f.message).toBe(
      'Lease loopguard-system/loopguard-leader was deleted before it could be updated ' +
        '(HTTP 404: leases.coordination.k8s.io "loopguard-leader" not found); reading it again and creating it.',
    );
    expect(f.message).not.toContain('namespace');
  });

  it('RBAC is not transient; 5xx and network errors are', () => {
    const forbidden = new ApiException(403, 'Unknown API Status Code!', JSON.stringify({ message: 'leases is forbidden' }), {});
    expect(describeLeaseFailure(forbidden, 'read', 'ns', 'l')).toMatchObject({ transient: false, message: expect.stringContaining('leader_election_role.yaml') });
    expect(describeLeaseFailure(new ApiException(503, 'x', '{}', {}), 'update', 'ns', 'l').transient).toBe(true);
    expect(describeLeaseFailure(new Error('connect ECONNREFUSED 127.0.0.1:6443'), 'read', 'ns', 'l')).toMatchObject({
      transient: true,
      message: 'Could not read Lease ns/l (connect ECONNREFUSED 127.0.0.1:6443); retrying.',
    });
  });
});

describe('CLB API at start-up', () => {
  it('https to a plain-HTTP endpoint (EPROTO) is one line naming the protocol setting, and fatal', () => {
    const e = toClbError(new SdkException(EPROTO, '', 'trace'), { action: 'DescribeLoadBalancers', endpoint: '127.0.0.1:41711' });
    expect(e).toMatchObject({ code: 'EndpointProtocolMismatch', retryable: false });
    expect(e.message).not.toContain('\n');
    expect(e.message).not.toContain('egress');
    expect(e.message).toContain('(request to https://127.0.0.1:41711/ failed, reason: write EPROTO TLS wrong version number)');
    expect(e.message).toContain('Fix: set --clb-protocol=http:// (LOOPGUARD_CLB_PROTOCOL=http://)');
    expect(judgeProbeFailure(e).kind).toBe('misconfigured');
  });

  it('tells what is fatal (configuration) from what is retried (may heal) and what is fine (the API answered)', () => {
    const judge = (err: Error) => judgeProbeFailure(err).kind;
    const network = (m: string) => new SdkException(`request to http://127.0.0.1:1/ failed, reason: ${m}`, '', 't');
    expect(judge(network('connect ECONNREFUSED 127.0.0.1:1'))).toBe('unavailable');
    expect(judge(network('getaddrinfo ENOTFOUND clb.example'))).toBe('unavailable');
    expect(judge(new CredentialsError('No Tencent Cloud credentials found (…). Fix: set TENCENTCLOUD_SECRET_ID …', false))).toBe('misconfigured');
    expect(judge(new CredentialsError('STS AssumeRoleWithWebIdentity failed', true))).toBe('unavailable');
    expect(judge(apiError('AuthFailure.SecretIdNotFound', 'SecretId not found'))).toBe('misconfigured');
    expect(judge(apiError('AuthFailure.SignatureFailure', 'bad signature'))).toBe('misconfigured');
    expect(judge(apiError('InvalidParameter.RegionNotFound', 'Region `ap-x` is not served'))).toBe('misconfigured');
    expect(judge(apiError('UnauthorizedOperation', 'no clb:DescribeLoadBalancers'))).toBe('unavailable');
    expect(judge(apiError('AuthFailure.SignatureExpire', 'clock'))).toBe('unavailable');
    expect(judge(apiError('RequestLimitExceeded', 'too fast'))).toBe('ok');
    expect(judge(apiError('InternalError', 'oops'))).toBe('ok');
  });
});

describe('CloudHealth', () => {
  const logger = () => {
    const lines: string[] = [];
    return { lines, info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
  };

  it('is unready while the endpoint is unreachable, logs the cause once, and recovers on the next good probe', async () => {
    const log = logger();
    let reachable = false;
    const health = new CloudHealth({
      probe: () => (reachable ? Promise.resolve([]) : Promise.reject(new SdkException('request to http://127.0.0.1:1/ failed, reason: connect ECONNREFUSED 127.0.0.1:1', '', 't'))),
      logger: log,
      minDelayMs: 60_000,
    });
    try {
      expect((await health.check()).kind).toBe('unavailable');
      expect(health.problem).toContain('Nothing accepts connections there');
      await health.check();
      expect(log.lines.filter((l) => l.startsWith('error'))).toHaveLength(1);
      reachable = true;
      expect((await health.check()).kind).toBe('ok');
      expect(health.problem).toBeUndefined();
      expect(log.lines.at(-1)).toBe('info CLB API usable again');
    } finally {
      health.stop();
    }
  });

  it("a successful call of the operator's own clears a known problem at once", async () => {
    const health = new CloudHealth({ probe: () => Promise.reject(apiError('UnauthorizedOperation', 'no')), logger: logger(), minDelayMs: 60_000 });
    try {
      await health.check();
      expect(health.problem).toBeDefined();
      health.observe({ action: 'DescribeListeners', outcome: 'ok', durationMs: 1 });
      expect(health.problem).toBeUndefined();
    } finally {
      health.stop();
    }
  });
});
