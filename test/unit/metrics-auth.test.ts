// Who may read /metrics (src/runtime/metrics-auth.ts): the decision table of controller-runtime's authn/authz filter,
// against a fake of loopguard's own Reviewer interface (the integration suite runs it against the apiserver).
import { describe, expect, it } from '@jest/globals';
import { CACHE_TTL, MetricsAuthorizer, type Reviewer, type ReviewedUser } from '../../src/runtime/metrics-auth.js';

function reviewer(users: Record<string, ReviewedUser>, allowed: Set<string>) {
  const calls = { token: 0, access: 0, seen: [] as Array<[string, string, string]> };
  let failing = false;
  const r: Reviewer = {
    async tokenReview(token) {
      calls.token++;
      if (failing) throw new Error('connect ECONNREFUSED');
      const user = users[token];
      return user ? { authenticated: true, user } : { authenticated: false, error: 'invalid bearer token' };
    },
    async accessReview(user, path, verb) {
      calls.access++;
      calls.seen.push([user.username, path, verb]);
      return { allowed: allowed.has(user.username) };
    },
  };
  return { r, calls, fail: (on: boolean) => (failing = on) };
}

const SCRAPER = { username: 'system:serviceaccount:monitoring:prometheus', groups: ['system:serviceaccounts'] };
const OTHER = { username: 'system:serviceaccount:tenant:app' };

describe('MetricsAuthorizer', () => {
  const setup = () => {
    let now = 1_000_000;
    const f = reviewer({ 'scraper-token': SCRAPER, 'other-token': OTHER }, new Set([SCRAPER.username]));
    return { ...f, auth: new MetricsAuthorizer(f.r, () => now), advance: (ms: number) => (now += ms) };
  };

  it.each([
    { name: 'no Authorization header', header: undefined, status: 401 },
    { name: 'basic credentials', header: 'Basic dXNlcjpwYXNz', status: 401 },
    { name: 'an empty bearer token', header: 'Bearer ', status: 401 },
    { name: 'a token the apiserver does not know', header: 'Bearer forged', status: 401 },
    { name: "a ServiceAccount without the metrics-reader role", header: 'Bearer other-token', status: 403 },
    { name: 'the scraper, bound to loopguard-metrics-reader', header: 'Bearer scraper-token', status: 200 },
  ])('$name → $status', async ({ header, status }) => {
    const { auth } = setup();
    expect((await auth.check(header, 'GET', '/metrics')).status).toBe(status);
  });

  it('asks the SubjectAccessReview about the non-resource URL with the verb of the method (HEAD is get)', async () => {
    const { auth, calls } = setup();
    await auth.check('Bearer scraper-token', 'GET', '/metrics');
    await auth.check('Bearer other-token', 'HEAD', '/metrics');
    expect(calls.seen).toEqual([
      [SCRAPER.username, '/metrics', 'get'],
      [OTHER.username, '/metrics', 'get'],
    ]);
    const denied = await auth.check('Bearer other-token', 'GET', '/metrics');
    expect(denied).toEqual({ status: 403, message: expect.stringContaining(`user ${OTHER.username} may not get /metrics`) });
    expect(JSON.stringify(denied)).not.toContain('other-token');
  });

  it("caches with controller-runtime's times: tokens 1 min, allowed 5 min, denied 30 s", async () => {
    const { auth, calls, advance } = setup();
    for (let i = 0; i < 3; i++) await auth.check('Bearer scraper-token', 'GET', '/metrics');
    expect(calls).toMatchObject({ token: 1, access: 1 });
    advance(CACHE_TTL.token + 1);
    await auth.check('Bearer scraper-token', 'GET', '/metrics');
    expect(calls).toMatchObject({ token: 2, access: 1 }); // the allow is still cached
    await auth.check('Bearer other-token', 'GET', '/metrics');
    advance(CACHE_TTL.deny - 1);
    await auth.check('Bearer other-token', 'GET', '/metrics');
    expect(calls).toMatchObject({ token: 3, access: 2 });
    advance(2);
    await auth.check('Bearer other-token', 'GET', '/metrics');
    expect(calls.access).toBe(3);
  });

  it('answers 500 when the apiserver cannot review, and does not cache that', async () => {
    const { auth, calls, fail } = setup();
    fail(true);
    expect(await auth.check('Bearer scraper-token', 'GET', '/metrics')).toEqual({ status: 500, message: expect.stringMatching(/TokenReview did not complete \(connect ECONNREFUSED\)/) });
    fail(false);
    expect((await auth.check('Bearer scraper-token', 'GET', '/metrics')).status).toBe(200);
    expect(calls.token).toBe(2);
  });

  it('holds at most 1,000 tokens however many are tried', async () => {
    const { auth } = setup();
    for (let i = 0; i < 1_200; i++) await auth.check(`Bearer random-${i}`, 'GET', '/metrics');
    expect(auth.cached.tokens).toBe(1_000);
  });
});
