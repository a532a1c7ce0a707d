// One operator replica as a Deployment's pod runs it: the process is started again whenever it exits (the
// kubelet's restartPolicy Always), whether the chaos suite killed it (SIGKILL) or it exited on its own (a leader
// that could not renew its Lease while the apiserver was down exits on purpose). A replica whose pod is gone for
// good (a leader killed with its node) is stopped instead.
import type { LocalOperatorOptions, LocalTke } from './local-tke.js';
import type { OperatorProcess } from './operator.js';

export interface Death {
  at: number;
  /** true: the suite's SIGKILL; false: the process exited by itself (its exit code says why). */
  killed: boolean;
  code: number | null;
}

const LEADER_METRIC = 'leader_election_master_status{name="loopguard-leader"} 1';

export class Replica {
  private proc: OperatorProcess | undefined;
  private starting: Promise<OperatorProcess> | undefined;
  private stopped = false;
  private killing = false;
  private pastLogs = '';
  readonly deaths: Death[] = [];
  starts = 0;

  constructor(
    private readonly tke: LocalTke,
    readonly options: LocalOperatorOptions & { identity: string },
  ) {}

  get identity(): string {
    return this.options.identity;
  }

  /** Starts the process (again) and resolves once it is ready; a start that fails is tried again, up to 3 times. */
  start(): Promise<OperatorProcess> {
    this.starting = (async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          const proc = await this.tke.startOperator(this.options);
          this.starts++;
          this.proc = proc;
          this.watch(proc);
          return proc;
        } catch (err) {
          if (attempt >= 3 || this.stopped) throw err;
        }
      }
    })();
    return this.starting;
  }

  /** The running process, once (re)started. */
  ready(): Promise<OperatorProcess> {
    if (!this.starting) throw new Error(`replica ${this.identity} was never started`);
    return this.starting;
  }

  /** SIGKILL, like a node failure or the OOM killer; the replica comes back unless `restart: false`. */
  async kill(options: { restart?: boolean } = {}): Promise<number> {
    const proc = this.proc;
    if (!proc) throw new Error(`replica ${this.identity} is not running`);
    if (options.restart === false) this.stopped = true;
    this.killing = true;
    const at = Date.now();
    await proc.stop('SIGKILL');
    return at;
  }

  /** SIGSTOP: the process freezes (a VM pause, a long GC), its sockets and timers with it. */
  pause(): number {
    const pid = this.proc?.child.pid;
    if (pid === undefined) throw new Error(`replica ${this.identity} is not running`);
    process.kill(pid, 'SIGSTOP');
    return Date.now();
  }

  /** SIGCONT: the frozen process runs on from where it stopped. */
  resume(): number {
    const pid = this.proc?.child.pid;
    if (pid === undefined) throw new Error(`replica ${this.identity} is not running`);
    process.kill(pid, 'SIGCONT');
    return Date.now();
  }

  async isLeader(): Promise<boolean> {
    const port = this.proc?.port;
    if (port === undefined || this.proc?.child.exitCode !== null) return false;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
    return (await res?.text())?.includes(LEADER_METRIC) ?? false;
  }

  /** This replica's logs across its restarts (the tail, for failure messages). */
  logs(chars = 6000): string {
    return `${this.pastLogs}${this.proc?.logs() ?? ''}`.slice(-chars);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.starting?.catch(() => undefined);
    await this.proc?.stop('SIGKILL');
  }

  private watch(proc: OperatorProcess): void {
    proc.child.once('exit', (code) => {
      this.pastLogs += `--- ${this.identity} exited (${code ?? 'signal'}) ---\n${proc.logs().slice(-4000)}\n`;
      this.deaths.push({ at: Date.now(), killed: this.killing, code });
      this.killing = false;
      if (this.stopped || this.proc !== proc) return;
      this.proc = undefined;
      void this.start().catch(() => undefined);
    });
  }
}
