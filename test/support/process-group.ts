// The end of a tool a test started detached (its own process group: Envoy Gateway with its relay, CoreDNS): the whole
// group, politely first, then for certain, so nothing of it outlives the suite (.ci/run's no_leftovers checks).
import type { ChildProcess } from 'node:child_process';

/** SIGTERM to the group, up to 10 s for `exit`, then SIGKILL to whatever is left of the group; resolves once it exited. */
export async function stopProcessGroup(child: ChildProcess | undefined, exit: Promise<void>, exited: () => boolean): Promise<void> {
  const group = child?.pid;
  if (group && !exited()) {
    process.kill(-group, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exit, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
  }
  if (group) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // the whole group is gone already
    }
  }
  await exit;
}
