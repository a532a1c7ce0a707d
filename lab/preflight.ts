// Before building anything: does this machine give the lab what it needs? Each missing piece is named with what
// to do about it, and `npm run lab` exits non-zero (issue 14 #4). The verdict is pure (`missing`); `gatherFacts`
// asks the machine, once, with a throw-away namespace removed at once.
import { newPrefix } from './names.js';
import { run } from './shell.js';

export const CAPABILITIES = ['root', 'ip', 'netns', 'veth', 'nft', 'sysctl'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface Facts {
  uid: number;
  /** Per capability: undefined = present; a string = why not (the command's own error when there is one). */
  problems: Partial<Record<Capability, string>>;
}

/** The commands the lab runs: how each is checked, and the Debian package that brings it. */
const COMMANDS = {
  ip: { check: ['ip', '-V'], pkg: 'iproute2' },
  nft: { check: ['nft', '--version'], pkg: 'nftables' },
  sysctl: { check: ['sysctl', '-V'], pkg: 'procps' },
} as const;
const apt = (c: keyof typeof COMMANDS): string => `install ${COMMANDS[c].pkg} (apt-get install ${COMMANDS[c].pkg})`;

const FIX: Record<Capability, string> = {
  root: 'run it as root (sudo npm run lab): network namespaces, veth and nftables need CAP_SYS_ADMIN and CAP_NET_ADMIN',
  ip: apt('ip'),
  netns: 'the kernel or the container must allow network namespaces (CONFIG_NET_NS; in a container: --privileged or CAP_SYS_ADMIN)',
  veth: 'the kernel needs the veth driver (CONFIG_VETH, modprobe veth)',
  nft: `${apt('nft')} and the kernel needs nf_tables with NAT (CONFIG_NF_TABLES, CONFIG_NFT_NAT)`,
  sysctl: `${apt('sysctl')} for sysctl`,
};

const WHAT: Record<Capability, string> = {
  root: 'root',
  ip: 'the ip command',
  netns: 'network namespaces',
  veth: 'veth pairs',
  nft: 'nftables',
  sysctl: 'the sysctl command',
};

const reason = (err: unknown): string => (err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err));

/**
 * Installs the Debian packages of the lab's missing commands, as root where apt-get is: `npm test` sets up what its
 * suites need (the lab suites need these, as the others need kube-apiserver), and a fresh Debian machine has no
 * nftables. Not root, no apt-get or a failed install: nothing, and the lab's preflight then names what is missing (the
 * lab suites fail with it; they never skip). The apt-get call is scripts/image/lib.sh's (ensure_tools) for the image.
 */
export async function installLabCommands(log: (line: string) => void): Promise<void> {
  const missing: string[] = [];
  for (const { check, pkg } of Object.values(COMMANDS)) await run([...check]).catch(() => missing.push(pkg));
  if (missing.length === 0 || process.getuid?.() !== 0) return;
  // The lock timeout: the image's build may be installing podman at the same time.
  const aptGet = (args: string[]) => run(['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', '-o', 'DPkg::Lock::Timeout=300', ...args]);
  try {
    await aptGet(['update', '-qq']);
    await aptGet(['install', '-y', '-qq', ...missing]);
    log(`installed the lab's commands from Debian: ${missing.join(', ')}`);
  } catch (err) {
    log(`could not install ${missing.join(', ')} for the lab: ${reason(err)}`);
  }
}

/** One line per missing capability, in a stable order; empty when the lab can run. */
export function missing(f: Facts): string[] {
  return CAPABILITIES.filter((c) => f.problems[c] !== undefined).map((c) => `missing ${WHAT[c]}: ${f.problems[c]} — ${FIX[c]}`);
}

/** Parses `--simulate-missing root,nft` (for tests of this path on a machine that has everything). */
export function parseSimulated(list: string | undefined): Set<Capability> {
  const out = new Set<Capability>();
  for (const item of (list ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(CAPABILITIES as readonly string[]).includes(item)) throw new Error(`--simulate-missing: unknown capability ${item} (one of ${CAPABILITIES.join(', ')})`);
    out.add(item as Capability);
  }
  return out;
}

export async function gatherFacts(simulated: Set<Capability> = new Set()): Promise<Facts> {
  const uid = process.getuid?.() ?? -1;
  const problems: Facts['problems'] = {};
  const note = (c: Capability, why: string) => (problems[c] ??= why);
  if (simulated.has('root') || uid !== 0) note('root', simulated.has('root') ? 'simulated (--simulate-missing root)' : `running as uid ${uid}`);
  for (const c of Object.keys(COMMANDS) as Array<keyof typeof COMMANDS>) {
    if (simulated.has(c)) note(c, `simulated (--simulate-missing ${c})`);
    else await run([...COMMANDS[c].check]).catch((err: unknown) => note(c, reason(err)));
  }
  for (const c of ['netns', 'veth'] as const) if (simulated.has(c)) note(c, `simulated (--simulate-missing ${c})`);
  // Live checks only where they can mean something: a throw-away namespace with a veth pair and an nft NAT table.
  if (problems.root === undefined && problems.ip === undefined && problems.netns === undefined) {
    const ns = `${newPrefix()}preflight`;
    try {
      await run(['ip', 'netns', 'add', ns]).catch((err: unknown) => {
        note('netns', reason(err));
        throw err;
      });
      if (problems.veth === undefined) await run(['ip', '-n', ns, 'link', 'add', 'name', 'pf0', 'type', 'veth', 'peer', 'name', 'pf1']).catch((err: unknown) => note('veth', reason(err)));
      if (problems.nft === undefined) {
        await run(['ip', 'netns', 'exec', ns, 'nft', '-f', '-'], 'table ip t {\n chain p {\n  type nat hook postrouting priority srcnat;\n }\n}\n').catch((err: unknown) => note('nft', reason(err)));
      }
    } catch {
      // reported above
    } finally {
      await run(['ip', 'netns', 'del', ns]).catch(() => undefined);
    }
  }
  return { uid, problems };
}
