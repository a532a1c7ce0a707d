// Who may read /metrics, decided as controller-runtime's filters.WithAuthenticationAndAuthorization and kube-rbac-proxy
// decide it: a TokenReview of the bearer token, a SubjectAccessReview of the user it names for the path and verb
// (docs/security.md "Metrics": why, and how to grant it). Cached by the token's hash with controller-runtime's times (a
// review per scrape would put two apiserver requests on every Prometheus interval), bounded against random tokens.
import { createHash } from 'node:crypto';
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';

export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The two reviews, behind loopguard's own interface (the apiserver's in `kubeReviewer`, a fake in unit tests). */
export interface Reviewer {
  tokenReview(token: string): Promise<{ authenticated: boolean; user?: ReviewedUser; error?: string }>;
  accessReview(user: ReviewedUser, path: string, verb: string): Promise<{ allowed: boolean; reason?: string }>;
}

export type Decision = { status: 200; user: string } | { status: 401 | 403 | 500; message: string };

/** controller-runtime's DelegatingAuthenticatorConfig.CacheTTL and DelegatingAuthorizerConfig's Allow/DenyCacheTTL. */
export const CACHE_TTL = { token: 60_000, allow: 5 * 60_000, deny: 30_000 } as const;
const MAX_ENTRIES = 1_000;

/** Bounded (least recently used goes first), each entry for its TTL by the authorizer's clock. */
function ttlCache<V extends object>(now: () => number): LRUCache<string, V> {
  return new LRUCache<string, V>({ max: MAX_ENTRIES, ttlResolution: 0, perf: { now } });
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

export class MetricsAuthorizer {
  private readonly tokens: LRUCache<string, { authenticated: boolean; user?: ReviewedUser }>;
  private readonly access: LRUCache<string, { allowed: boolean; reason?: string }>;

  constructor(private readonly reviewer: Reviewer, now: () => number = Date.now) {
    this.tokens = ttlCache(now);
    this.access = ttlCache(now);
  }

  /** The decision for a request with this Authorization header, HTTP method and path. */
  async check(authorization: string | undefined, method: string, path: string): Promise<Decision> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) return { status: 401, message: 'Unauthorized: send a ServiceAccount token as "Authorization: Bearer <token>"' };
    const tokenKey = hash(m[1]!);
    let identity = this.tokens.get(tokenKey);
    if (!identity) {
      let review: Awaited<ReturnType<Reviewer['tokenReview']>>;
      try {
        review = await this.reviewer.tokenReview(m[1]!);
      } catch (err) {
        return { status: 500, message: `Authentication failed: the TokenReview did not complete (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` };
      }
      identity = { authenticated: review.authenticated && review.user !== undefined, user: review.user };
      this.tokens.set(tokenKey, identity, { ttl: CACHE_TTL.token });
    }
    if (!identity.authenticated || !identity.user) return { status: 401, message: 'Unauthorized: the token is not valid' };
    const user = identity.user;
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const accessKey = hash(JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), user.extra ?? {}, path, verb]));
    let verdict = this.access.get(accessKey);
    if (!verdict) {
      try {
        verdict = await this.reviewer.accessReview(user, path, verb);
      } catch (err) {
        return { status: 500, message: `Authorization for user ${user.username} failed: the SubjectAccessReview did not complete (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` };
      }
      this.access.set(accessKey, verdict, { ttl: verdict.allowed ? CACHE_TTL.allow : CACHE_TTL.deny });
    }
    if (!verdict.allowed) {
      return { status: 403, message: `Forbidden: user ${user.username} may not ${verb} ${path} (bind it to the metrics-reader ClusterRole: loopguard-metrics-reader, or <release>-metrics-reader from the chart)` };
    }
    return { status: 200, user: user.username };
  }

  /** Entries held, for tests of the bound. */
  get cached(): { tokens: number; access: number } {
    return { tokens: this.tokens.size, access: this.access.size };
  }
}

const REVIEW_TIMEOUT_MS = 10_000;

/** The apiserver's TokenReview and SubjectAccessReview (RBAC: create on both, config/rbac/metrics_auth_role.yaml). */
export function kubeReviewer(kc: KubeConfig): Reviewer {
  const authn = kc.makeApiClient(AuthenticationV1Api);
  const authz = kc.makeApiClient(AuthorizationV1Api);
  const within = <T>(p: Promise<T>): Promise<T> =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${REVIEW_TIMEOUT_MS / 1000} s`)), REVIEW_TIMEOUT_MS).unref())]);
  return {
    async tokenReview(token) {
      const r = await within(authn.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } }));
      const u = r.status?.user;
      // undefined fields are not sent, nor part of the cache key (MetricsAuthorizer).
      return { authenticated: r.status?.authenticated === true, user: u?.username ? { username: u.username, uid: u.uid, groups: u.groups, extra: u.extra } : undefined, error: r.status?.error };
    },
    async accessReview(user, path, verb) {
      const spec = { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb } };
      const r = await within(authz.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } }));
      return { allowed: r.status?.allowed === true, reason: r.status?.reason };
    },
  };
}
