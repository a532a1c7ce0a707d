// A tool a test starts detached, in its own process group (Envoy Gateway with its relay, CoreDNS): its output
// collected, up once a line of it says so, and its end the whole group's, politely first, then for certain, so nothing
// of it outlives the suite (.ci/run's no_leftovers checks).
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './kube.js';

export interface ProcessGroup {
  /** Everything it printed so far, stdout and stderr together. */
  logs(): string;
  /** SIGTERM to the group, up to 10 s, then SIGKILL to whatever is left; resolves once it exited. */
  stop(): Promise<void>;
}

export interface ProcessGroupOptions {
  /** What the wait and the errors call it. */
  what: string;
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The line that says it is up. */
  ready: RegExp;
  timeoutMs: number;
  /** How much of its output an error shows. */
  tail: number;
}

/** Starts the tool and waits for `ready`; when it exits first or the wait times out, stops the group and throws. */
export async function startProcessGroup(o: ProcessGroupOptions): Promise<ProcessGroup> {
  let logs = '';
  let exited = false;
  const child: ChildProcess = spawn(o.command, [...o.args], { cwd: o.cwd, detached: true, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  const exit = new Promise<void>((resolve) => child.on('exit', () => ((exited = true), resolve())));
  const group: ProcessGroup = { logs: () => logs, stop: () => stopGroup(child, exit, () => exited) };
  try {
    const up = await waitFor(o.what, () => (exited ? 'exited' : o.ready.test(logs) ? 'up' : undefined), { timeoutMs: o.timeoutMs, intervalMs: 100, context: () => `--- ${o.what} logs ---\n${logs.slice(-o.tail)}` });
    if (up === 'exited') throw new Error(`${o.what}: exited:\n${logs.slice(-o.tail)}`);
  } catch (err) {
    await group.stop();
    throw err;
  }
  return group;
}

async function stopGroup(child: ChildProcess, exit: Promise<void>, exited: () => boolean): Promise<void> {
  const group = child.pid;
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
  // A child that never started (ENOENT) has no exit to wait for.
  if (group) await exit;
}
