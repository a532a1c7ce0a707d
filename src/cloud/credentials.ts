// Which Tencent Cloud identity loopguard uses. Order in `auto` mode:
//   1. env TENCENTCLOUD_SECRET_ID/KEY(/SESSION_TOKEN)   — a Secret via envFrom: explicit, wins
//   2. a credentials file: the configured path (mounted Secret), else ~/.tencentcloud/credentials,
//      /etc/tencentcloud/credentials
//   3. TKE pod identity (OIDC), only when its TKE_* variables are present
//   4. the CVM role of the node (instance metadata)
// OIDC comes before the CVM role (the SDK's DefaultCredentialProvider has it the other way round):
// the TKE_* variables exist only when someone bound a role to loopguard's ServiceAccount, while the
// node's role is shared by every pod on the node — taking it first would silently ignore the narrower
// identity the operator asked for. AWS SDKs order web identity before IMDS for the same reason.
//
// A source that is present but broken (half-set env, unreadable mounted file, STS failure) stops the
// search with an error instead of falling through to a different identity.
import type { CloudLogger } from './hooks.js';
import { safeLog, silentLogger } from './hooks.js';
import type { CloudCredential, CredentialProvider, CredentialSource } from './credential-providers.js';
import {
  CredentialSourceAbsent, CvmRoleCredentialProvider, EnvCredentialProvider, ProfileCredentialProvider, StaticCredentialProvider,
  TkeOidcCredentialProvider,
} from './credential-providers.js';
import { ClbError, CredentialsError } from './errors.js';

export { redactSecrets, registerSecret } from './redact.js';
export type { CloudCredential, CredentialProvider, CredentialSource } from './credential-providers.js';
export {
  CredentialSourceAbsent, CvmRoleCredentialProvider, EnvCredentialProvider, ProfileCredentialProvider, StaticCredentialProvider,
  TkeOidcCredentialProvider, parseIni,
} from './credential-providers.js';

/** Tries sources in order; the first one that is set up is used from then on. */
export class CredentialChain implements CredentialProvider {
  private selected: CredentialProvider | undefined;
  private selecting: Promise<CloudCredential> | undefined;

  constructor(
    private readonly providers: readonly CredentialProvider[],
    private readonly logger: CloudLogger = silentLogger,
  ) {
    if (providers.length === 0) throw new TypeError('CredentialChain needs at least one provider');
  }

  get source(): CredentialSource {
    return this.selected?.source ?? this.providers[0]?.source ?? 'static';
  }

  describe(): string {
    return this.selected ? this.selected.describe() : `one of: ${this.providers.map((p) => p.describe()).join('; ')}`;
  }

  async getCredential(): Promise<CloudCredential> {
    if (this.selected) {
      try {
        return await this.selected.getCredential();
      } catch (err) {
        throw asCredentialsError(err, this.selected);
      }
    }
    this.selecting ??= this.select().finally(() => (this.selecting = undefined));
    return this.selecting;
  }

  private async select(): Promise<CloudCredential> {
    const absent: string[] = [];
    for (const provider of this.providers) {
      try {
        const credential = await provider.getCredential();
        this.selected = provider;
        safeLog(this.logger, 'info', 'using Tencent Cloud credentials', { source: provider.source, from: provider.describe() });
        return credential;
      } catch (err) {
        if (err instanceof CredentialSourceAbsent) {
          absent.push(`${provider.source}: ${err.message}`);
          safeLog(this.logger, 'debug', 'credential source not available', { source: provider.source, detail: err.message });
          continue;
        }
        throw asCredentialsError(err, provider);
      }
    }
    // Not cached: the next call searches again (a Secret may have been added meanwhile).
    throw new CredentialsError(
      `No Tencent Cloud credentials found (${absent.join('; ')}). Fix: set TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY ` +
        'from a Secret, mount a credentials file, or bind a CAM role to loopguard (TKE pod identity or the node\'s CVM role).',
      false,
    );
  }
}

function asCredentialsError(err: unknown, provider: CredentialProvider): ClbError {
  if (err instanceof CredentialsError) {
    return new CredentialsError(`Tencent Cloud credentials from ${provider.describe()}: ${err.apiMessage}`, err.retryable, { cause: err });
  }
  if (err instanceof ClbError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new CredentialsError(`Tencent Cloud credentials from ${provider.describe()}: ${message}`, true, { cause: err });
}

export type CredentialMode = 'auto' | CredentialSource;

export interface CredentialOptions {
  /** `auto` (default) searches in the order above; any other value uses only that source. */
  mode?: CredentialMode;
  /** For `static` (tests, the emulator). */
  static?: CloudCredential;
  /** A credentials file to use instead of the default paths (mounted Secret); env LOOPGUARD_CREDENTIALS_FILE. */
  credentialsFile?: string;
  /** INI section, default `default`. */
  profile?: string;
  env?: NodeJS.ProcessEnv;
  logger?: CloudLogger;
  /** STS endpoint for OIDC, e.g. `sts.internal.tencentcloudapi.com` inside a VPC. */
  stsEndpoint?: string;
  cvmMetadataUrl?: string;
  cvmTimeoutMs?: number;
}

/** Builds the provider the client uses; see the module comment for the order. */
export function createCredentialProvider(options: CredentialOptions = {}): CredentialProvider {
  const env = options.env ?? process.env;
  const file = options.credentialsFile ?? env['LOOPGUARD_CREDENTIALS_FILE'];
  const make: Record<CredentialSource, () => CredentialProvider> = {
    static: () => {
      if (!options.static) throw new TypeError('credential mode "static" needs options.static');
      return new StaticCredentialProvider(options.static);
    },
    env: () => new EnvCredentialProvider(env),
    profile: () =>
      new ProfileCredentialProvider({ ...(file ? { path: file } : {}), ...(options.profile ? { profile: options.profile } : {}) }),
    oidc: () => new TkeOidcCredentialProvider({ env, ...(options.stsEndpoint ? { stsEndpoint: options.stsEndpoint } : {}) }),
    'cvm-role': () =>
      new CvmRoleCredentialProvider({
        ...(options.cvmMetadataUrl ? { metadataUrl: options.cvmMetadataUrl } : {}),
        ...(options.cvmTimeoutMs ? { timeoutMs: options.cvmTimeoutMs } : {}),
      }),
  };
  const mode = options.mode ?? (options.static ? 'static' : 'auto');
  const order: CredentialSource[] = mode === 'auto' ? ['env', 'profile', 'oidc', 'cvm-role'] : [mode];
  return new CredentialChain(
    order.map((s) => make[s]()),
    options.logger ?? silentLogger,
  );
}
