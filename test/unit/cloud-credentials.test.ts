import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { AssumeRoleWithWebIdentity } from '../../src/cloud/credential-providers.js';
import {
  CredentialChain, CredentialSourceAbsent, createCredentialProvider, CvmRoleCredentialProvider, EnvCredentialProvider, parseIni,
  ProfileCredentialProvider, redactSecrets, StaticCredentialProvider, TkeOidcCredentialProvider,
} from '../../src/cloud/credentials.js';
import type { CredentialProvider } from '../../src/cloud/credentials.js';
import { CredentialsError } from '../../src/cloud/errors.js';
import type { CloudLogger } from '../../src/cloud/hooks.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopguard-creds-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function captureLogger(): CloudLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string, meta?: Record<string, unknown>) => lines.push(`${level} ${message} ${JSON.stringify(meta ?? {})}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

const absent = (source: CredentialProvider['source']): CredentialProvider => ({
  source,
  describe: () => source,
  getCredential: () => Promise.reject(new CredentialSourceAbsent(`${source} not here`)),
});

describe('EnvCredentialProvider', () => {
  it('reads TENCENTCLOUD_SECRET_ID/KEY/SESSION_TOKEN', async () => {
    const p = new EnvCredentialProvider({ TENCENTCLOUD_SECRET_ID: 'AKIDenv0000001', TENCENTCLOUD_SECRET_KEY: 'envKey0000001', TENCENTCLOUD_SESSION_TOKEN: 'tok00000001' });
    await expect(p.getCredential()).resolves.toEqual({ secretId: 'AKIDenv0000001', secretKey: 'envKey0000001', token: 'tok00000001' });
  });

  it('is absent when unset, and an error when half set', async () => {
    await expect(new EnvCredentialProvider({}).getCredential()).rejects.toBeInstanceOf(CredentialSourceAbsent);
    const half = await new EnvCredentialProvider({ TENCENTCLOUD_SECRET_ID: 'AKIDenv0000001' }).getCredential().catch((e: unknown) => e);
    expect(half).toBeInstanceOf(CredentialsError);
    expect((half as Error).message).toContain('TENCENTCLOUD_SECRET_KEY');
  });
});

describe('ProfileCredentialProvider', () => {
  it('parses the INI format', () => {
    expect(parseIni('# c\n[default]\nsecret_id = a\nsecret_key="b"\n[other]\nx=1')).toEqual({ '': {}, default: { secret_id: 'a', secret_key: 'b' }, other: { x: '1' } });
  });

  it('reads a mounted file and re-reads it when it changes (rotated Secret)', async () => {
    const path = join(dir, 'credentials');
    await writeFile(path, '[default]\nsecret_id = AKIDfile000001\nsecret_key = fileKey000001\n');
    const p = new ProfileCredentialProvider({ path });
    await expect(p.getCredential()).resolves.toEqual({ secretId: 'AKIDfile000001', secretKey: 'fileKey000001' });
    await writeFile(path, '[default]\nsecret_id = AKIDfile000002\nsecret_key = fileKey000002\ntoken = fileTok000002\n');
    const later = new Date(Date.now() + 5_000);
    await utimes(path, later, later);
    await expect(p.getCredential()).resolves.toEqual({ secretId: 'AKIDfile000002', secretKey: 'fileKey000002', token: 'fileTok000002' });
  });

  it('an explicit file that is missing is an error; default paths that are missing are absent', async () => {
    await expect(new ProfileCredentialProvider({ path: join(dir, 'nope') }).getCredential()).rejects.toBeInstanceOf(CredentialsError);
    await expect(new ProfileCredentialProvider({ searchPaths: [join(dir, 'nope')] }).getCredential()).rejects.toBeInstanceOf(CredentialSourceAbsent);
  });

  it('a file without keys in the profile section is an error naming the section', async () => {
    const path = join(dir, 'empty');
    await writeFile(path, '[other]\nsecret_id = x\n');
    await expect(new ProfileCredentialProvider({ path }).getCredential()).rejects.toThrow(/\[default\]/);
  });
});

describe('TkeOidcCredentialProvider', () => {
  const env = (tokenFile: string): NodeJS.ProcessEnv => ({
    TKE_REGION: 'ap-guangzhou',
    TKE_PROVIDER_ID: 'provider-1',
    TKE_WEB_IDENTITY_TOKEN_FILE: tokenFile,
    TKE_ROLE_ARN: 'qcs::cam::uin/1:roleName/loopguard',
  });

  it('exchanges the projected token, refreshes ahead of expiry and re-reads the rotated token', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'jwt-1');
    let now = 1_000_000_000_000;
    const seen: string[] = [];
    const assumeRole: AssumeRoleWithWebIdentity = (params, region) => {
      seen.push(`${params.WebIdentityToken}@${region}`);
      return Promise.resolve({
        Credentials: { TmpSecretId: `AKIDtmp${seen.length}xxxxxx`, TmpSecretKey: `tmpKey${seen.length}xxxxxx`, Token: `tmpTok${seen.length}xxxxxx` },
        ExpiredTime: Math.floor(now / 1000) + 3600,
      });
    };
    const p = new TkeOidcCredentialProvider({ env: env(tokenFile), assumeRole, now: () => now });
    expect((await p.getCredential()).secretId).toBe('AKIDtmp1xxxxxx');
    now += 50 * 60_000; // 50 min: still > 5 min before expiry
    expect((await p.getCredential()).secretId).toBe('AKIDtmp1xxxxxx');
    await writeFile(tokenFile, 'jwt-2');
    now += 6 * 60_000; // 56 min: inside the 5-min margin
    expect((await p.getCredential()).secretId).toBe('AKIDtmp2xxxxxx');
    expect(seen).toEqual(['jwt-1@ap-guangzhou', 'jwt-2@ap-guangzhou']);
  });

  it('keeps a still-valid credential when a refresh fails', async () => {
    const tokenFile = join(dir, 'token2');
    await writeFile(tokenFile, 'jwt');
    let now = 1_000_000_000_000;
    let fail = false;
    const assumeRole: AssumeRoleWithWebIdentity = () =>
      fail
        ? Promise.reject(new Error('sts down'))
        : Promise.resolve({ Credentials: { TmpSecretId: 'AKIDkeptxxxxxx', TmpSecretKey: 'k'.repeat(10), Token: 't'.repeat(10) }, ExpiredTime: Math.floor(now / 1000) + 600 });
    const p = new TkeOidcCredentialProvider({ env: env(tokenFile), assumeRole, now: () => now });
    await p.getCredential();
    fail = true;
    now += 5 * 60_000 + 1_000; // past the refresh point (half of 10 min), before expiry
    expect((await p.getCredential()).secretId).toBe('AKIDkeptxxxxxx');
    now += 10 * 60_000; // expired
    await expect(p.getCredential()).rejects.toThrow(/sts down/);
  });

  it('is absent without TKE_* variables and an error when half configured', async () => {
    await expect(new TkeOidcCredentialProvider({ env: {}, assumeRole: () => Promise.reject(new Error('unused')) }).getCredential()).rejects.toBeInstanceOf(
      CredentialSourceAbsent,
    );
    await expect(
      new TkeOidcCredentialProvider({ env: { TKE_REGION: 'ap-guangzhou' }, assumeRole: () => Promise.reject(new Error('unused')) }).getCredential(),
    ).rejects.toThrow(/TKE_PROVIDER_ID/);
  });
});

describe('CvmRoleCredentialProvider', () => {
  const response = (status: number, body: string): Response => new Response(body, { status });

  it('reads the role name, then its temporary credentials, with a timeout', async () => {
    const urls: string[] = [];
    const fetchFn = ((url: string, init?: RequestInit) => {
      urls.push(url);
      expect(init?.signal).toBeDefined();
      if (url.endsWith('/security-credentials/')) return Promise.resolve(response(200, 'node-role\n'));
      return Promise.resolve(
        response(200, JSON.stringify({ Code: 'Success', TmpSecretId: 'AKIDcvmxxxxxxx', TmpSecretKey: 'cvmKeyxxxxxx', Token: 'cvmTokxxxxxx', ExpiredTime: Math.floor(Date.now() / 1000) + 3600 })),
      );
    }) as unknown as typeof fetch;
    const p = new CvmRoleCredentialProvider({ metadataUrl: 'http://meta.invalid/security-credentials/', fetch: fetchFn });
    await expect(p.getCredential()).resolves.toEqual({ secretId: 'AKIDcvmxxxxxxx', secretKey: 'cvmKeyxxxxxx', token: 'cvmTokxxxxxx' });
    expect(urls).toEqual(['http://meta.invalid/security-credentials/', 'http://meta.invalid/security-credentials/node-role']);
    expect(p.describe()).toContain('node-role');
  });

  it('is absent off CVM (metadata unreachable) or without a bound role', async () => {
    const unreachable = (() => Promise.reject(new TypeError('fetch failed'))) as unknown as typeof fetch;
    await expect(new CvmRoleCredentialProvider({ fetch: unreachable }).getCredential()).rejects.toBeInstanceOf(CredentialSourceAbsent);
    const noRole = (() => Promise.resolve(response(404, 'not found'))) as unknown as typeof fetch;
    await expect(new CvmRoleCredentialProvider({ fetch: noRole }).getCredential()).rejects.toBeInstanceOf(CredentialSourceAbsent);
  });
});

describe('CredentialChain', () => {
  it('uses the first source that is set up, logs which (without secrets), and sticks to it', async () => {
    const logger = captureLogger();
    const env = new EnvCredentialProvider({ TENCENTCLOUD_SECRET_ID: 'AKIDchain00001', TENCENTCLOUD_SECRET_KEY: 'chainSecretKey01' });
    const later: CredentialProvider = { source: 'cvm-role', describe: () => 'cvm', getCredential: jest.fn(() => Promise.reject(new Error('must not be asked'))) };
    const chain = new CredentialChain([absent('profile'), env, later], logger);
    await expect(chain.getCredential()).resolves.toMatchObject({ secretId: 'AKIDchain00001' });
    await chain.getCredential();
    expect(later.getCredential).not.toHaveBeenCalled();
    expect(chain.source).toBe('env');
    const text = logger.lines.join('\n');
    expect(text).toContain('using Tencent Cloud credentials');
    expect(text).not.toContain('chainSecretKey01');
    expect(text).not.toContain('AKIDchain00001');
  });

  it('stops at a source that is present but broken instead of switching identity', async () => {
    const broken = new EnvCredentialProvider({ TENCENTCLOUD_SECRET_ID: 'AKIDonlyid0001' });
    const fallback = new StaticCredentialProvider({ secretId: 'AKIDother00001', secretKey: 'otherKey000001' });
    const err = await new CredentialChain([broken, fallback]).getCredential().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CredentialsError);
    expect((err as CredentialsError).reason).toBe('CredentialsUnavailable');
  });

  it('says what it tried and how to fix it when nothing is set up; never console.errors', async () => {
    const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const err = await new CredentialChain([absent('env'), absent('profile'), absent('oidc'), absent('cvm-role')]).getCredential().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CredentialsError);
      const message = (err as Error).message;
      for (const s of ['env', 'profile', 'oidc', 'cvm-role', 'TENCENTCLOUD_SECRET_ID', 'Secret']) expect(message).toContain(s);
      expect((err as CredentialsError).retryable).toBe(false);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });

  it('auto mode order: env, then file, then OIDC, then the CVM role', async () => {
    const path = join(dir, 'auto-credentials');
    await writeFile(path, '[default]\nsecret_id = AKIDfromfile01\nsecret_key = fromFileKey001\n');
    const both = createCredentialProvider({
      env: { TENCENTCLOUD_SECRET_ID: 'AKIDfromenv001', TENCENTCLOUD_SECRET_KEY: 'fromEnvKey0001' },
      credentialsFile: path,
    });
    expect((await both.getCredential()).secretId).toBe('AKIDfromenv001');
    const fileOnly = createCredentialProvider({ env: { LOOPGUARD_CREDENTIALS_FILE: path } });
    expect((await fileOnly.getCredential()).secretId).toBe('AKIDfromfile01');
    expect(fileOnly.describe()).toContain(path);
    const staticOnly = createCredentialProvider({ static: { secretId: 'AKIDstatic0001', secretKey: 'staticKey00001' } });
    expect(staticOnly.source).toBe('static');
  });

  it('secrets loaded by providers are redacted from any later log text', async () => {
    await new EnvCredentialProvider({ TENCENTCLOUD_SECRET_ID: 'id-without-prefix-1', TENCENTCLOUD_SECRET_KEY: 'plainKeyNoPattern77' }).getCredential();
    expect(redactSecrets('oops plainKeyNoPattern77 and id-without-prefix-1')).toBe('oops [REDACTED] and [REDACTED]');
  });
});
