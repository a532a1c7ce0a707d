// The few commands the lab runs (iproute2, nftables, sysctl), each as argv (no shell), with the command and its
// stderr in the error so a failed step says what the kernel refused.
import { execFile, execFileSync } from 'node:child_process';

export class CommandError extends Error {
  constructor(
    readonly argv: string[],
    readonly stderr: string,
    readonly code: number | string | null,
  ) {
    super(`${argv.join(' ')} failed (${code ?? 'signal'}): ${stderr.trim() || '(no stderr)'}`);
  }
}

// iproute2, nft and sysctl live in /usr/sbin and /sbin on Debian, which a non-login shell's PATH may lack; `ip netns
// exec` looks its command up on the same PATH.
const SBIN = ['/usr/sbin', '/sbin'];
export const labEnv = { ...process.env, PATH: [...(process.env['PATH'] ?? '').split(':').filter(Boolean), ...SBIN.filter((d) => !(process.env['PATH'] ?? '').split(':').includes(d))].join(':') };

export function run(argv: string[], input?: string): Promise<string> {
  const [cmd, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = execFile(cmd ?? '', args, { encoding: 'utf8', env: labEnv, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new CommandError(argv, stderr || err.message, (err as NodeJS.ErrnoException).code ?? null));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** For the exit handler, where nothing asynchronous runs any more; errors are ignored (best effort). */
export function runSyncQuiet(argv: string[]): string {
  const [cmd, ...args] = argv;
  try {
    return execFileSync(cmd ?? '', args, { encoding: 'utf8', env: labEnv, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** `ip -n NS …` */
export const ipNs = (ns: string, args: string[]): Promise<string> => run(['ip', '-n', ns, ...args]);

/** Loads an nft script into a namespace (atomically: a script is one transaction). */
export const nftNs = (ns: string, script: string): Promise<string> => run(['ip', 'netns', 'exec', ns, 'nft', '-f', '-'], script);

export const nftJson = async (ns: string, args: string[]): Promise<unknown> => JSON.parse(await run(['ip', 'netns', 'exec', ns, 'nft', '-j', ...args]));

/** Sets sysctls inside a namespace in one exec (`net.ipv4.conf.eth0.accept_local=1` …). */
export const sysctlNs = (ns: string, settings: Record<string, string | number>): Promise<string> =>
  run(['ip', 'netns', 'exec', ns, 'sysctl', '-q', '-w', ...Object.entries(settings).map(([k, v]) => `${k}=${v}`)]);

export const readSysctlNs = async (ns: string, key: string): Promise<string> =>
  (await run(['ip', 'netns', 'exec', ns, 'sysctl', '-n', key])).trim();
