// Helpers for integration tests: every suite talks to its Jest worker's real kube-apiserver, started by the
// integration runner (harness.ts; or to an existing cluster named by KUBECONFIG), and isolates itself in a fresh
// namespace.
import { dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { CoreV1Api, KubernetesObjectApi, VersionApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { PooledKubeConfig } from '../../src/kube/pooled-kubeconfig.js';
import { ifFound } from '../../src/runtime/kube-errors.js';
import { GO_CLIENT_ENV } from '../controlplane/crds.js';

export function kubeconfigPath(): string {
  const path = process.env.KUBECONFIG;
  if (!path) throw new Error('KUBECONFIG is not set: integration tests must run under the jest integration project');
  return path;
}

/** The unprivileged user's kubeconfig (no RBAC bindings unless a test grants them), when the harness made one. */
export function userKubeconfigPath(): string | undefined {
  return process.env.LOOPGUARD_TEST_USER_KUBECONFIG || undefined;
}

/** Each kubeconfig file as loaded, by path and text: one per file content, so a test's calls share one connection pool. */
const loaded = new Map<string, KubeConfig>();

/**
 * The kubeconfig as client-node reads it, one per file content (a file rewritten in place, a restarted control plane's,
 * is read again). Pooled as the operator's (src/kube/pooled-kubeconfig.ts): a plain KubeConfig opens a TLS connection
 * for every request, three times the CPU of a request on both sides (docs/development.md "Where the CPU goes").
 */
export function kubeConfig(path?: string): KubeConfig {
  const file = path ?? kubeconfigPath();
  // The path too: loadFromFile resolves a relative certificate path from the file's folder.
  const key = `${file}\n${readFileSync(file, 'utf8')}`;
  let kc = loaded.get(key);
  if (!kc) {
    kc = new PooledKubeConfig();
    kc.loadFromFile(file);
    loaded.set(key, kc);
  }
  return kc;
}

const objectApis = new Map<KubeConfig, KubernetesObjectApi>();

/**
 * An object as stored, or undefined when there is none, read through this process's own client: what a wait polls.
 * A `kubectl get` is a process of its own (0.2-0.3 s of CPU), which a poll every few hundred ms multiplies: two waits
 * of `precedence` ran it 178 times (docs/development.md "Where the CPU goes"). What a user does, or reads once to
 * look at it, goes through `kubectl` (below).
 */
export async function readObject<T = KubernetesObject>(
  ref: { apiVersion: string; kind: string; name: string; namespace?: string },
  kubeconfig?: string,
): Promise<T | undefined> {
  const kc = kubeConfig(kubeconfig);
  let api = objectApis.get(kc);
  if (!api) objectApis.set(kc, (api = KubernetesObjectApi.makeApiClient(kc)));
  const metadata = { name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }) };
  // The type is the caller's word for what it reads (loopguard's API types type timestamps as strings; client-node's, as Dates).
  return (await ifFound(api.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata }))) as T | undefined;
}

/** Creates a namespace with a generated name (e.g. `svc-x7k2p`) and returns its name. */
export async function createNamespace(prefix: string, kc = kubeConfig()): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const ns = await core.createNamespace({
    body: { metadata: { generateName: `${prefix.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 40)}-` } },
  });
  const name = ns.metadata?.name;
  if (!name) throw new Error('namespace created without a name');
  return name;
}

/**
 * Deletes a namespace. The test control plane runs no namespace controller, so the namespace stays
 * Terminating and its objects remain; that is harmless because every test uses a fresh one.
 */
export async function deleteNamespace(name: string, kc = kubeConfig()): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.deleteNamespace({ name }).catch(() => undefined);
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The kubectl on PATH, its links followed; undefined when there is none. */
const kubectlOnPath = ((): string | undefined => {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'kubectl'))) return realpathSync(join(dir, 'kubectl'));
  }
  return undefined;
})();

const clients = new Map<string, string>();

/**
 * The kubectl a user's `kubectl` runs against this cluster. Google Cloud SDK's kubectl (these machines' own) is a
 * dispatcher: every run first asks the server its version, then runs the `kubectl.1.<minor>` beside it when there is
 * one. That binary, found once per kubeconfig, is the same client without the dispatch: 0.17 s of CPU and about
 * 0.6 s per run under load, over about 1,500 runs in `npm test` (docs/development.md "Where the CPU goes").
 * Anywhere else (no such binary, or the version unreadable for now): `kubectl` itself.
 */
async function kubectlFor(kubeconfig: string): Promise<string> {
  const known = clients.get(kubeconfig);
  if (known || !kubectlOnPath) return known ?? 'kubectl';
  let minor: number | undefined;
  try {
    const code = kubeConfig(kubeconfig).makeApiClient(VersionApi).getCode();
    const late = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000).unref());
    minor = await Promise.race([code.then((v) => Number.parseInt(v.minor, 10), () => undefined), late]);
  } catch {
    // An unreadable kubeconfig: kubectl itself says what is wrong (as it does for an apiserver not answering).
  }
  if (minor === undefined || Number.isNaN(minor)) return 'kubectl';
  const sibling = join(dirname(kubectlOnPath), `kubectl.1.${minor}`);
  const client = existsSync(sibling) ? sibling : 'kubectl';
  clients.set(kubeconfig, client);
  return client;
}

/** Runs kubectl as a user would, against the test cluster. Never throws on a non-zero exit. */
export async function kubectl(
  args: string[],
  options: { input?: string; kubeconfig?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const kubeconfig = options.kubeconfig ?? kubeconfigPath();
  const client = await kubectlFor(kubeconfig);
  return new Promise((resolve) => {
    const child = execFile(
      client,
      // Discovery cached per control plane: kubectl keys its cache by host:port, which a later control plane of another
      // minor may reuse, and a stale cache once said a 1.28 apiserver served VAP v1.
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dirname(kubeconfig), 'kubectl-cache'), ...args],
      { timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...GO_CLIENT_ENV } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/**
 * Thrown by a wait's read when waiting longer cannot help (the process it waits on has exited): waitFor rethrows it at
 * once. Any other error is taken for a transient one and the read is tried again until the deadline.
 */
export class WaitHopeless extends Error {}

export interface WaitOptions<T> {
  timeoutMs?: number;
  intervalMs?: number;
  /** Done when this holds for the value read; without it, when the value read is not undefined. */
  until?: (value: T) => boolean;
  /** Appended to the timeout message, e.g. the operator's log tail. */
  context?: () => string | Promise<string>;
}

const SHOWN_CHARS = 3000;

/** The last value for a timeout message: JSON (Maps and Sets as entries), cut to a readable length. */
function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => (v instanceof Map || v instanceof Set ? [...v] : v)) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

/** A wait without an interval of its own reads after 100 ms, then half as long again each time, up to 500 ms. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 500;

/**
 * The one polling helper of the tests: calls `read` every `intervalMs` until `until(value)` holds (or, without
 * `until`, until it returns a value other than undefined) and returns that value. A read that throws counts as
 * not yet. After `timeoutMs` it fails with what was awaited, the last value read and the last error, so a
 * failure says how far things got, not only that they did not finish.
 *
 * Without `intervalMs` the pauses grow (100, 150, 225, … 500 ms): a read costs CPU on both sides (a small GET through
 * client-node 2-5 ms in this process and as much in the kube-apiserver, 2026-11-30), and in a long wait nearly every
 * read says "not yet". Over one `npm test` the waits without an interval of their own (664 of 854, 1,000 s of
 * waiting) read 3,055 times, where a read every 100 ms would have been about 9,000. A short wait still ends within
 * 100-150 ms of its condition; a wait that must notice its condition sooner (a measured time) passes its own interval.
 */
export async function waitFor<T>(what: string, read: () => Promise<T> | T, options: WaitOptions<T> & { until: (value: T) => boolean }): Promise<T>;
export async function waitFor<T>(what: string, read: () => Promise<T | undefined> | T | undefined, options?: WaitOptions<T>): Promise<T>;
export async function waitFor<T>(
  what: string,
  read: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 30_000, intervalMs, until, context }: WaitOptions<T> = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let pause = intervalMs ?? FIRST_PAUSE_MS;
  let last: { value: T | undefined } | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await read();
      if (until ? until(value as T) : value !== undefined) return value as T;
      last = { value };
    } catch (err) {
      if (err instanceof WaitHopeless) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) {
      const parts = [`timed out after ${timeoutMs} ms waiting for ${what}`, last ? `last value: ${show(last.value)}` : 'no value read'];
      if (lastError !== undefined) parts.push(`last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
      if (context) parts.push(await (async () => context())().catch((err: unknown) => `(context failed: ${String(err)})`));
      throw new Error(parts.join('\n'));
    }
    await new Promise((r) => setTimeout(r, pause));
    if (intervalMs === undefined) pause = Math.min(MAX_PAUSE_MS, Math.round(pause * 1.5));
  }
}
