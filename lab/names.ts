// Names of what one lab creates. Everything global (network namespaces in /run/netns, the agent's bundle in the temp
// dir) starts with `lg-lab-<pid>-<seq>-`, so parallel runs (CI, tests, other engineers) never collide and a later run
// can tell a dead run's leftovers (its pid is gone) from a live one's. Links and nft tables live inside those
// namespaces only.

export const LAB_PREFIX = 'lg-lab-';
const OWNER = /^lg-lab-(\d+)-/;

let seq = 0;

/** A fresh prefix for one lab of this process, e.g. `lg-lab-4242-1-`. */
export function newPrefix(pid = process.pid): string {
  seq += 1;
  return `${LAB_PREFIX}${pid}-${seq}-`;
}

/** The pid that owns a lab namespace, or undefined for names that are not the lab's. */
export function ownerPid(name: string): number | undefined {
  const m = OWNER.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** A lab name whose run is gone (killed with SIGKILL, a crashed CI job): its leftovers are anyone's to remove. */
export function orphaned(name: string): boolean {
  const pid = ownerPid(name);
  return pid !== undefined && !alive(pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** nft table name inside the lab's namespaces (nft identifiers take no '-'). */
export const NFT_TABLE = 'lg_lab';
