// The individual credential sources (tencent-cloud.md §4 "Credential providers"). The SDK has classes for
// all of them, but they do not fit an operator: ProfileCredential reads only the two fixed paths,
// CvmRoleCredential fetches without a timeout (a blackholed metadata address hangs start-up),
// OIDCRoleArnCredential refreshes only ~0.6 s before expiry (ms vs s mix-up) and honours http_proxy,
// and DefaultCredentialProvider console.errors every failure. So each source here is small and
// explicit; STS is still called through the SDK's CommonClient.
import { readFile, stat } from 'node:fs/promises';
import https from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CommonClient } from 'tencentcloud-sdk-nodejs/tencentcloud/common/common_client.js';
import { CredentialsError } from './errors.js';
import { registerSecret } from './redact.js';

export interface CloudCredential {
  secretId: string;
  secretKey: string;
  token?: string;
}

export type CredentialSource = 'static' | 'env' | 'profile' | 'oidc' | 'cvm-role';

export interface CredentialProvider {
  readonly source: CredentialSource;
  /** Where the key came from, for logs ("env TENCENTCLOUD_SECRET_ID", "/etc/…/credentials"); never the key. */
  describe(): string;
  getCredential(): Promise<CloudCredential>;
}

/** Thrown by a source that is simply not set up here, so the chain may try the next one. */
export class CredentialSourceAbsent extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialSourceAbsent';
  }
}

function remember(c: CloudCredential): CloudCredential {
  registerSecret(c.secretId);
  registerSecret(c.secretKey);
  registerSecret(c.token);
  return c;
}

export class StaticCredentialProvider implements CredentialProvider {
  readonly source = 'static' as const;
  private readonly credential: CloudCredential;

  constructor(credential: CloudCredential) {
    if (!credential.secretId || !credential.secretKey) throw new CredentialsError('static credentials need a secretId and a secretKey', false);
    this.credential = remember({ ...credential });
  }

  describe(): string {
    return 'static credentials';
  }

  getCredential(): Promise<CloudCredential> {
    return Promise.resolve(this.credential);
  }
}

/** `TENCENTCLOUD_SECRET_ID` / `TENCENTCLOUD_SECRET_KEY` / optional `TENCENTCLOUD_SESSION_TOKEN` (e.g. from a Secret via envFrom). */
export class EnvCredentialProvider implements CredentialProvider {
  readonly source = 'env' as const;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  describe(): string {
    return 'environment TENCENTCLOUD_SECRET_ID/TENCENTCLOUD_SECRET_KEY';
  }

  getCredential(): Promise<CloudCredential> {
    const secretId = this.env['TENCENTCLOUD_SECRET_ID']?.trim();
    const secretKey = this.env['TENCENTCLOUD_SECRET_KEY']?.trim();
    const token = this.env['TENCENTCLOUD_SESSION_TOKEN']?.trim();
    if (!secretId && !secretKey) return Promise.reject(new CredentialSourceAbsent('TENCENTCLOUD_SECRET_ID/KEY not set'));
    if (!secretId || !secretKey) {
      const missing = secretId ? 'TENCENTCLOUD_SECRET_KEY' : 'TENCENTCLOUD_SECRET_ID';
      return Promise.reject(new CredentialsError(`${missing} is empty while its partner is set; set both from the credentials Secret.`, false));
    }
    return Promise.resolve(remember({ secretId, secretKey, ...(token ? { token } : {}) }));
  }
}

/** Minimal INI reader for the credentials file format (`[default]`, `secret_id = …`). */
export function parseIni(text: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let current: Record<string, string> = (sections[''] = {});
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header?.[1]) {
      current = sections[header[1]] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) value = value.slice(1, -1);
    current[key] = value;
  }
  return sections;
}

export const DEFAULT_PROFILE_PATHS: readonly string[] = [join(homedir(), '.tencentcloud', 'credentials'), '/etc/tencentcloud/credentials'];

/**
 * A credentials file in the SDK's INI format. With an explicit `path` (a mounted Secret) a missing or
 * unreadable file is an error, not "absent": the operator asked for it. The file is re-read when it
 * changes, so a rotated Secret is picked up without a restart.
 */
export class ProfileCredentialProvider implements CredentialProvider {
  readonly source = 'profile' as const;
  private cached: { path: string; mtimeMs: number; credential: CloudCredential } | undefined;

  constructor(
    private readonly options: { path?: string; profile?: string; searchPaths?: readonly string[] } = {},
  ) {}

  describe(): string {
    return `credentials file ${this.options.path ?? this.options.searchPaths?.join(' or ') ?? DEFAULT_PROFILE_PATHS.join(' or ')}`;
  }

  async getCredential(): Promise<CloudCredential> {
    const explicit = this.options.path !== undefined;
    const candidates = explicit ? [this.options.path as string] : (this.options.searchPaths ?? DEFAULT_PROFILE_PATHS);
    for (const path of candidates) {
      let mtimeMs: number;
      try {
        mtimeMs = (await stat(path)).mtimeMs;
      } catch (err) {
        if (explicit) throw new CredentialsError(`cannot read the credentials file ${path}: ${(err as Error).message}`, false);
        continue;
      }
      if (this.cached?.path === path && this.cached.mtimeMs === mtimeMs) return this.cached.credential;
      const credential = await this.read(path);
      this.cached = { path, mtimeMs, credential };
      return credential;
    }
    throw new CredentialSourceAbsent(`no credentials file at ${candidates.join(', ')}`);
  }

  private async read(path: string): Promise<CloudCredential> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new CredentialsError(`cannot read the credentials file ${path}: ${(err as Error).message}`, false);
    }
    const profile = this.options.profile ?? 'default';
    const section = parseIni(text)[profile];
    const secretId = section?.['secret_id'];
    const secretKey = section?.['secret_key'];
    if (!secretId || !secretKey) {
      throw new CredentialsError(`the credentials file ${path} has no secret_id and secret_key in section [${profile}]`, false);
    }
    const token = section['token'];
    return remember({ secretId, secretKey, ...(token ? { token } : {}) });
  }
}

interface TemporaryCredential {
  credential: CloudCredential;
  /** Epoch ms. */
  expiresAtMs: number;
}

/** Refresh before expiry: 5 min ahead, or half the lifetime for short-lived tokens. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * Shared by the temporary-credential sources: one fetch at a time, refreshed ahead of expiry, and a
 * still-valid credential is kept when a refresh fails (the STS or metadata blip is retried later).
 */
abstract class RefreshingProvider implements CredentialProvider {
  abstract readonly source: CredentialSource;
  private current: (TemporaryCredential & { refreshAtMs: number }) | undefined;
  private inflight: Promise<CloudCredential> | undefined;

  constructor(protected readonly now: () => number = Date.now) {}

  abstract describe(): string;
  protected abstract fetchCredential(): Promise<TemporaryCredential>;

  getCredential(): Promise<CloudCredential> {
    const t = this.now();
    if (this.current && t < this.current.refreshAtMs) return Promise.resolve(this.current.credential);
    this.inflight ??= this.refresh().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async refresh(): Promise<CloudCredential> {
    const fetchedAt = this.now();
    try {
      const fresh = await this.fetchCredential();
      const lifetime = Math.max(0, fresh.expiresAtMs - fetchedAt);
      this.current = { ...fresh, refreshAtMs: fresh.expiresAtMs - Math.min(REFRESH_MARGIN_MS, lifetime / 2) };
      remember(fresh.credential);
      return fresh.credential;
    } catch (err) {
      if (this.current && this.now() < this.current.expiresAtMs) return this.current.credential;
      throw err;
    }
  }
}

export const CVM_METADATA_URL = 'http://metadata.tencentyun.com/latest/meta-data/cam/security-credentials/';

interface StsCredentialsBody {
  TmpSecretId?: string;
  TmpSecretKey?: string;
  Token?: string;
  ExpiredTime?: number;
}

/** The CAM role bound to the CVM (node), from the instance metadata service. */
export class CvmRoleCredentialProvider extends RefreshingProvider {
  readonly source = 'cvm-role' as const;
  private roleName: string | undefined;
  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: { metadataUrl?: string; timeoutMs?: number; fetch?: typeof fetch; now?: () => number } = {}) {
    super(options.now);
    this.url = options.metadataUrl ?? CVM_METADATA_URL;
    this.timeoutMs = options.timeoutMs ?? 2_000;
    this.fetchFn = options.fetch ?? fetch;
  }

  describe(): string {
    return `CVM role${this.roleName ? ` ${this.roleName}` : ''} (instance metadata)`;
  }

  protected async fetchCredential(): Promise<TemporaryCredential> {
    if (!this.roleName) {
      let res: Response;
      try {
        // Global fetch (undici) ignores http_proxy, unlike the SDK's node-fetch wrapper.
        res = await this.fetchFn(this.url, { signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (err) {
        throw new CredentialSourceAbsent(`instance metadata not reachable (${(err as Error).message})`);
      }
      if (!res.ok) throw new CredentialSourceAbsent(`no CAM role bound to this CVM (metadata HTTP ${res.status})`);
      const name = (await res.text()).trim().split('\n')[0]?.trim();
      if (!name) throw new CredentialSourceAbsent('no CAM role bound to this CVM');
      this.roleName = name;
    }
    const res = await this.fetchFn(this.url + encodeURIComponent(this.roleName), { signal: AbortSignal.timeout(this.timeoutMs) }).catch(
      (err: unknown) => {
        throw new CredentialsError(`fetching credentials of CVM role ${this.roleName ?? ''} failed: ${(err as Error).message}`, true);
      },
    );
    if (!res.ok) {
      if (res.status === 404) this.roleName = undefined; // role unbound or renamed: look it up again next time
      throw new CredentialsError(`fetching credentials of CVM role failed: metadata HTTP ${res.status}`, true);
    }
    const body = (await res.json()) as StsCredentialsBody & { Code?: string };
    if (body.Code !== undefined && body.Code !== 'Success') throw new CredentialsError(`CVM role credentials: metadata Code ${body.Code}`, true);
    return toTemporary(body, 'CVM metadata');
  }
}

function toTemporary(body: StsCredentialsBody, from: string): TemporaryCredential {
  if (!body.TmpSecretId || !body.TmpSecretKey || !body.Token || typeof body.ExpiredTime !== 'number') {
    throw new CredentialsError(`${from} returned incomplete temporary credentials`, true);
  }
  return {
    credential: { secretId: body.TmpSecretId, secretKey: body.TmpSecretKey, token: body.Token },
    expiresAtMs: body.ExpiredTime * 1000,
  };
}

export interface AssumeRoleWithWebIdentityParams {
  ProviderId: string;
  WebIdentityToken: string;
  RoleArn: string;
  RoleSessionName: string;
  DurationSeconds?: number;
}

export type AssumeRoleWithWebIdentity = (
  params: AssumeRoleWithWebIdentityParams,
  region: string,
) => Promise<{ Credentials?: StsCredentialsBody; ExpiredTime?: number }>;

/** STS AssumeRoleWithWebIdentity through the SDK's CommonClient (unsigned, as the SDK's OIDC class does). */
export function stsAssumeRoleWithWebIdentity(options: { endpoint?: string; timeoutSec?: number } = {}): AssumeRoleWithWebIdentity {
  const agent = new https.Agent({ keepAlive: false });
  return async (params, region) => {
    const client = new CommonClient(options.endpoint ?? 'sts.tencentcloudapi.com', '2018-08-13', {
      credential: { secretId: '', secretKey: '' },
      region,
      profile: { httpProfile: { reqTimeout: options.timeoutSec ?? 10, agent } },
    });
    return (await client.request('AssumeRoleWithWebIdentity', params, { skipSign: true })) as {
      Credentials?: StsCredentialsBody;
      ExpiredTime?: number;
    };
  };
}

const OIDC_ENV = ['TKE_REGION', 'TKE_PROVIDER_ID', 'TKE_WEB_IDENTITY_TOKEN_FILE', 'TKE_ROLE_ARN'] as const;

/**
 * TKE pod identity (OIDC): the pod-identity webhook injects TKE_* variables and a projected
 * ServiceAccount token; STS exchanges the token for temporary keys of TKE_ROLE_ARN. The token file
 * is re-read on every refresh because kubelet rotates it.
 */
export class TkeOidcCredentialProvider extends RefreshingProvider {
  readonly source = 'oidc' as const;
  private readonly assume: AssumeRoleWithWebIdentity;

  constructor(
    private readonly options: { env?: NodeJS.ProcessEnv; assumeRole?: AssumeRoleWithWebIdentity; stsEndpoint?: string; now?: () => number } = {},
  ) {
    super(options.now);
    this.assume = options.assumeRole ?? stsAssumeRoleWithWebIdentity(options.stsEndpoint ? { endpoint: options.stsEndpoint } : {});
  }

  describe(): string {
    return `TKE pod identity (OIDC) role ${this.env()['TKE_ROLE_ARN'] ?? ''}`.trim();
  }

  private env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env;
  }

  protected async fetchCredential(): Promise<TemporaryCredential> {
    const env = this.env();
    const present = OIDC_ENV.filter((k) => env[k]);
    if (present.length === 0) throw new CredentialSourceAbsent('TKE pod identity (TKE_* variables) not configured');
    const missing = OIDC_ENV.filter((k) => !env[k]);
    if (missing.length > 0) throw new CredentialsError(`TKE pod identity is half configured: ${missing.join(', ')} not set`, false);
    let token: string;
    try {
      token = (await readFile(env['TKE_WEB_IDENTITY_TOKEN_FILE'] as string, 'utf8')).trim();
    } catch (err) {
      throw new CredentialsError(`cannot read the web identity token file: ${(err as Error).message}`, true);
    }
    let body: { Credentials?: StsCredentialsBody; ExpiredTime?: number };
    try {
      body = await this.assume(
        {
          ProviderId: env['TKE_PROVIDER_ID'] as string,
          WebIdentityToken: token,
          RoleArn: env['TKE_ROLE_ARN'] as string,
          RoleSessionName: `loopguard-${this.now()}`,
        },
        env['TKE_REGION'] as string,
      );
    } catch (err) {
      throw new CredentialsError(`STS AssumeRoleWithWebIdentity failed: ${(err as Error).message}`, true, { cause: err });
    }
    return toTemporary({ ...body.Credentials, ...(body.ExpiredTime === undefined ? {} : { ExpiredTime: body.ExpiredTime }) }, 'STS');
  }
}
