// Real CoreDNS for the DNS test: scripts/coredns/build.sh builds github.com/coredns/coredns at its pinned version
// from the Go module proxy into ~/.cache/loopguard/coredns/<version> (only the first run builds; .ci/run does it in
// its own stage). No skip: the facts docs/dns.md rests on are measured here, so a machine that cannot build it fails
// the suite, naming the command.
//
// startCoreDns runs `coredns -conf Corefile` in a temp directory holding the files the test gives it (the Corefile
// and whatever it imports, as a ConfigMap volume would hold them). CoreDNS needs no namespace of its own: each server
// block binds 127.0.0.1 on a port the test picked (`bind 127.0.0.1`, UDP and TCP), and its kubernetes plugin reaches
// the test apiserver through the admin kubeconfig the Corefile names (`kubeconfig`, which takes precedence over
// `endpoint`: the plugin's README).
import type { CoreV1Api } from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';
import { startProcessGroup, type ProcessGroup } from './process-group.js';

const BUILD = join(REPO_ROOT, 'scripts', 'coredns', 'build.sh');

export interface CoreDnsTools {
  binary: string;
  /** The pinned version, from the cache directory's name (v1.15.0). */
  version: string;
}

export function coreDnsTools(suite: string): CoreDnsTools {
  const built = spawnSync('bash', [BUILD], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 40 * 60_000 });
  if (built.status !== 0) {
    const reason = `${built.stderr ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new Error(`${suite}: CoreDNS could not be built (exit ${built.status ?? built.signal}); run \`bash scripts/coredns/build.sh\`:\n${reason}`);
  }
  const dir = built.stdout.trim().split('\n').pop() ?? '';
  return { binary: join(dir, 'coredns'), version: dir.split('/').pop() ?? '' };
}

/** A 127.0.0.1 port free for both TCP and UDP at the time of asking (a DNS server block listens on both). */
export async function freeDnsPort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const s = createSocket('udp4');
      s.once('error', () => (s.close(), resolve(false)));
      s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no 127.0.0.1 port free for both TCP and UDP after 20 tries');
}

export interface CoreDnsProcess {
  /** The directory the Corefile and its imports are in (CoreDNS's working directory). */
  dir: string;
  /** Replaces a file there the way a ConfigMap volume update does: whole, by rename (never a half-written file). */
  write(file: string, text: string): void;
  /** Removes a file there (a ConfigMap key gone, an optional volume's ConfigMap deleted). */
  remove(file: string): void;
  logs(): string;
  /** Configurations CoreDNS has started with so far: the first start, then each successful reload. */
  configurations(): number;
  stop(): Promise<void>;
}

export interface CoreDnsOptions {
  binary: string;
  /** File name → content; `Corefile` is required. */
  files: Record<string, string>;
}

/** Each configuration CoreDNS starts logs its hash (the reload plugin), so counting them needs no sleep. */
const CONFIGURATION_LINE = /plugin\/reload: Running configuration SHA512 = /g;

export async function startCoreDns(options: CoreDnsOptions): Promise<CoreDnsProcess> {
  if (!options.files['Corefile']) throw new Error('startCoreDns: files must hold a Corefile');
  const dir = mkdtempSync(join(tmpdir(), 'lg-coredns-'));
  let tool: ProcessGroup | undefined;
  const write = (file: string, text: string): void => {
    const path = join(dir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };
  // CoreDNS and anything it started (one process group), then the directory, whatever step failed.
  const stop = async (): Promise<void> => {
    await tool?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const [file, text] of Object.entries(options.files)) write(file, text);
    // Up once it prints its banner (after every server block is listening and the kubernetes plugin has synced or
    // given up waiting: it holds the start for that).
    tool = await startProcessGroup({
      what: 'CoreDNS',
      command: options.binary,
      args: ['-conf', join(dir, 'Corefile')],
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', HOME: dir },
      ready: /CoreDNS-\d+\.\d+\.\d+/,
      timeoutMs: 30_000,
      tail: 4000,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const logs = tool.logs;
  return { dir, write, remove: (file) => rmSync(join(dir, file)), logs, configurations: () => logs().match(CONFIGURATION_LINE)?.length ?? 0, stop };
}

/** A ConfigMap key a file in CoreDNS's directory is read from. */
export interface ConfigMapFile {
  namespace: string;
  name: string;
  key: string;
}

export interface ConfigMapSync {
  /** Syncs now (the kubelet's next sync period), for a test that must not wait for the next poll. */
  now(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * STANDS IN FOR THE KUBELET'S CONFIGMAP VOLUME. In a cluster, CoreDNS's pod mounts ConfigMaps (its Corefile, and
 * loopguard's rules once the administrator adds the mount: docs/dns.md §4), and the kubelet replaces a changed key's
 * file atomically on its next sync. A test cannot mount a ConfigMap into a process, so this polls the ConfigMaps on
 * the test apiserver and writes each key's text into CoreDNS's directory the same way (whole, by rename:
 * CoreDnsProcess.write), and removes the file when the key or the ConfigMap is gone. It does nothing else: what
 * CoreDNS then does with the files (reload, a parse failure) is CoreDNS's own.
 */
export function syncConfigMapFiles(core: CoreV1Api, dns: Pick<CoreDnsProcess, 'write' | 'remove'>, files: Record<string, ConfigMapFile>, intervalMs = 250): ConfigMapSync {
  const last = new Map<string, string | undefined>();
  let running: Promise<void> = Promise.resolve();
  const once = async () => {
    for (const [file, from] of Object.entries(files)) {
      const cm = await core.readNamespacedConfigMap({ namespace: from.namespace, name: from.name }).catch(() => undefined);
      const text = cm?.data?.[from.key];
      if (last.has(file) && last.get(file) === text) continue;
      if (text === undefined) {
        if (last.get(file) !== undefined) dns.remove(file);
      } else dns.write(file, text);
      last.set(file, text);
    }
  };
  const tick = () => (running = running.then(once, once));
  const timer = setInterval(() => void tick(), intervalMs);
  return {
    now: () => tick(),
    stop: async () => {
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}
