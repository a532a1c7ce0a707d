// The README's local run ("Quick start", "Five minutes on your machine"), its commands as written, the way a user types them: in
// bash, from the checkout, with nothing in the environment but PATH and HOME (not the test's KUBECONFIG):
//   npm run dev:up; source .dev/env; npm start (here in the background, not in a second shell); kubectl apply
//   the sample workload and the Audit policy; kubectl wait for Ready; stop npm start; npm run dev:down.
// Where it differs from a user: npm start is stopped with SIGTERM, not Ctrl-C (a background job of a
// non-interactive bash ignores SIGINT), and must exit 0; `kubectl describe`, which only shows, is not run.
// It checks that the README still says each command, in this order.
// dev:up starts its own control plane next to the one of jest's global setup; that is fine. npm start serves
// its probes on the default port, 127.0.0.1:8081, so the test first checks that nothing else listens there.
//
// It runs in a copy of the checkout (node_modules linked): dev:up/dev:down keep their state in .dev/ of the
// checkout, and a developer's own `npm run dev:up` in this one must survive the test's `dev:down`.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive, type ControlPlaneState } from '../controlplane/launcher.js';
import { bash, copyCheckout, groups, type Run } from '../support/checkout.js';
import { waitFor } from '../support/kube.js';
import { markdownSection } from '../support/readme.js';

/** The README's commands, in its order; the test fails if the README no longer says them, or not in this order. */
const README = {
  up: 'npm run dev:up',
  env: 'source .dev/env',
  start: 'npm start',
  workload: 'kubectl apply -f config/samples/demo-workload.yaml',
  policy: 'kubectl apply -n loopguard-demo -f config/samples/audit-policy.yaml',
  wait: 'kubectl wait --for=condition=Ready lbp/audit-all -n loopguard-demo --timeout=60s',
  diagnosed: "kubectl wait --for=jsonpath='{.status.counts.pending}'=0 lbp/audit-all -n loopguard-demo --timeout=60s",
  down: 'npm run dev:down',
};

const TIMEOUT_MS = 6 * 60_000;
/** The README's npm start serves /healthz, /readyz and /metrics on the default --probe-port, on loopback. */
const PROBE_PORT = 8081;

/**
 * The commands of the README's "Quick start" section in the order it says them: the lines of its sh blocks
 * (comments stripped) and, where the prose names one ("then run `npm run dev:down`"), that too.
 */
function readmeCommands(): string[] {
  const section = markdownSection('## Quick start');
  const lines: string[] = [];
  for (const m of section.matchAll(/```sh\n([\s\S]*?)```|`([^`\n]+)`/g)) {
    if (m[1] !== undefined) {
      for (const line of m[1].split('\n')) lines.push(line.replace(/\s+#.*$/, '').trim());
    } else {
      lines.push((m[2] ?? '').trim());
    }
  }
  return lines.filter(Boolean);
}

/** What listens on TCP `port` here, as "pid: command line" (from /proc/net/tcp* and /proc/<pid>/fd). */
function listenersOn(port: number): string[] {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const row of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = row.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]?.split(':').pop() ?? '', 16) === port) inodes.add(f[9]!);
    }
  }
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const sockets = readdirSync(`/proc/${pid}/fd`).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (!sockets.some((l) => inodes.has(l.replace(/^socket:\[(\d+)\]$/, '$1')))) continue;
      found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()}`);
    } catch {
      // gone meanwhile, or not ours to look at
    }
  }
  return found;
}

/** Undefined when 127.0.0.1:`port` can be listened on; otherwise why not and what to stop. */
async function portProblem(port: number): Promise<string | undefined> {
  const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const server = createServer();
    server.once('error', resolve);
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(undefined)));
  });
  if (!error) return undefined;
  const holders = listenersOn(port);
  return (
    `127.0.0.1:${port} is not free (${error.code ?? error.message}); the README's npm start serves its probes there ` +
    `(the default --probe-port), so this test cannot run. Stop ${holders.length > 0 ? `what listens there: ${holders.join('; ')}` : `what listens on port ${port} (ss -ltnp 'sport = :${port}' names it)`}, then run the test again.`
  );
}

/** Processes whose working directory is inside `dir`: everything the README's commands started there. */
function processesIn(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()}`);
    } catch {
      // gone meanwhile, or a zombie
    }
  }
  return found;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

describe('README: running the operator locally', () => {
  let checkout: string;
  let out: string;
  let run: Run;

  beforeAll(async () => {
    // Else npm start fails "probe port in use", or the readiness check below asks another process.
    const busy = await portProblem(PROBE_PORT);
    if (busy) throw new Error(busy);
    checkout = copyCheckout();
    out = mkdtempSync(join(tmpdir(), 'loopguard-readme-out-'));
    // The README's commands verbatim; the lines marked "test" only record what the assertions look at.
    const script = [
      'set -euo pipefail',
      'trap \'echo "[test] failed at line $LINENO" >&2\' ERR',
      README.up,
      README.env,
      `cp "$(cat .dev/cluster)/state.json" ${q(join(out, 'cluster-state.json'))}; cat .dev/*.pid > ${q(join(out, 'background.pids'))}  # test`,
      `${README.start} > ${q(join(out, 'operator.log'))} 2>&1 &`,
      'operator=$!',
      README.workload,
      README.policy,
      README.wait,
      README.diagnosed,
      `kubectl get lbp audit-all -n loopguard-demo -o json > ${q(join(out, 'policy.json'))}  # test: what describe shows`,
      // test: what a user would look at with curl (there is no curl on every machine: node is here).
      `node -e "fetch('http://127.0.0.1:${PROBE_PORT}/readyz?verbose').then(async (r) => console.log(r.status + '\\n' + (await r.text())))" > ${q(join(out, 'readyz'))}  # test`,
      'kill -TERM "$operator"',
      'set +e; wait "$operator"; echo $? > ' + q(join(out, 'operator.rc')) + '; set -e',
      README.down,
    ].join('\n');
    run = await bash(script, checkout, TIMEOUT_MS - 60_000);
  }, TIMEOUT_MS);

  afterAll(async () => {
    // Only after a failure can npm start outlive its script (the script waits for it otherwise).
    for (const pgid of run?.code === 0 ? [] : groups) {
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (!checkout) return;
    // After a failure, stop whatever the script left behind (dev:down knows the background processes).
    if (existsSync(join(checkout, '.dev', 'cluster')) || existsSync(join(checkout, '.dev', 'env'))) {
      await bash(README.down, checkout, 60_000);
    }
    rmSync(checkout, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }, 90_000);

  const file = (name: string): string => (existsSync(join(out, name)) ? readFileSync(join(out, name), 'utf8') : '');
  const explain = (): string => `--- script output ---\n${run.output}\n--- npm start output ---\n${file('operator.log')}`;

  it('the README still says these commands, in this order', () => {
    const commands = readmeCommands();
    let from = 0;
    for (const command of Object.values(README)) {
      const at = commands.indexOf(command, from);
      const inReadme = commands.includes(command);
      expect({ command, inReadme, afterThePreviousOne: at >= 0 }).toEqual({ command, inReadme: true, afterThePreviousOne: true });
      if (at >= 0) from = at + 1;
    }
  });

  it('every step succeeds: the policy becomes Ready, npm start exits 0 on SIGTERM', () => {
    expect({ code: run.code, output: run.code === 0 ? '' : explain() }).toEqual({ code: 0, output: '' });
    expect(file('operator.rc').trim()).toBe('0');
    expect(run.output).toContain('condition met');
  });

  it('once no target is Pending, the diagnosis shows the sample workload\'s two risks and the plan for each', () => {
    const policy = JSON.parse(file('policy.json') || '{}') as { status?: { counts?: { atRisk?: number; pending?: number }; targets?: { kind: string; name: string; verdict: string; plan?: string[] }[] } };
    expect(policy.status?.counts).toMatchObject({ atRisk: 2, pending: 0 });
    const atRisk = (policy.status?.targets ?? []).filter((t) => t.verdict === 'AtRisk');
    expect(atRisk.map((t) => `${t.kind}/${t.name}`).sort()).toEqual(['Ingress/api', 'Service/orders']);
    for (const t of atRisk) expect(t.plan?.length).toBeGreaterThan(0);
  });

  it("the operator was ready, said where its namespace is (.dev/env's, never default), and logged no HTTP header dumps or CLB failures", () => {
    const log = file('operator.log');
    expect(file('readyz')).toMatch(/^200\n/);
    expect(log).toContain("loopguard's namespace: loopguard-system (set by --namespace, LOOPGUARD_NAMESPACE or an alias); there: Lease loopguard-leader, observation checkpoint, admission params");
    // Once: a renewal in flight when npm start stops must not count as leading again (it restarted the queue).
    expect(log.match(/"Became leader"/g)).toHaveLength(1);
    for (const bad of ['Headers:', 'HTTP-Code', 'EPROTO', 'CLB API unusable', 'Cannot start']) {
      expect({ bad, found: log.includes(bad) }).toEqual({ bad, found: false });
    }
  });

  it('nothing is left running: not the operator, the CLB emulator, the TKE simulator or the control plane', async () => {
    const pids = file('background.pids').split('\n').map(Number).filter((n) => n > 0);
    // dev:down deletes the control plane's state directory; the script kept a copy of its state file.
    const cluster = JSON.parse(file('cluster-state.json') || '{}') as Partial<ControlPlaneState>;
    expect(pids).toHaveLength(2);
    expect(cluster).toMatchObject({ apiserverPid: expect.any(Number), etcdPid: expect.any(Number) });
    pids.push(cluster.apiserverPid ?? 0, cluster.etcdPid ?? 0);
    // dev:down waits for each process to exit, so this holds at once; the wait only absorbs reaping.
    await waitFor('every started process gone', () => (pids.every((p) => !alive(p)) && processesIn(checkout).length === 0 ? true : undefined), {
      timeoutMs: 10_000,
    }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\nstill alive: ${pids.filter(alive).join(', ')}\n${processesIn(checkout).join('\n')}`);
    });
    expect(existsSync(join(checkout, '.dev', 'env'))).toBe(false);
  });
});
