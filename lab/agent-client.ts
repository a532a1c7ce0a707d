// Starts an agent (lab/agent.ts, bundled: lab/agent-bundle.ts) inside a namespace and talks to it over its
// stdin/stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BUNDLE_NODE_OPTIONS } from '../scripts/lib/bundle.js';
import type { ProbeReport } from '../src/api/probe.js';
import type { AgentRequest, AgentResponse, Outcome, ProbeWindowRequest, ProxyConfig } from './agent-protocol.js';
import { labEnv } from './shell.js';

export class Agent {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private stderr = '';
  private exited = false;

  private constructor(
    readonly ns: string,
    private readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let msg: AgentResponse;
      try {
        msg = JSON.parse(line) as AgentResponse;
      } catch {
        return; // not ours (nothing else writes to stdout, but never crash on it)
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(`agent in ${ns}: ${msg.error}`));
    });
    child.stderr!.on('data', (d) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    // A request written while the lab is being removed (a signal mid-run) meets an agent that is gone or whose stdin
    // is closed: EPIPE or write-after-end. Unhandled, that error would end the lab process with status 1 instead of
    // the signal's; the 'exit' below rejects the request instead.
    child.stdin!.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error(`agent in ${ns} exited (${code ?? signal}): ${this.stderr.trim()}`));
      this.pending.clear();
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** `bundle`: the lab's AgentBundle file. */
  static async start(ns: string, bundle: string): Promise<Agent> {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...BUNDLE_NODE_OPTIONS, bundle], {
      env: labEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const agent = new Agent(ns, child);
    await agent.call({ op: 'ping' });
    return agent;
  }

  call(req: AgentRequest): Promise<unknown> {
    if (this.exited) return Promise.reject(new Error(`agent in ${this.ns} has exited: ${this.stderr.trim()}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, req })}\n`);
    });
  }

  serve(name: string, tcpPort: number, httpPort: number): Promise<unknown> {
    return this.call({ op: 'serve', name, tcpPort, httpPort });
  }

  async connect(o: { host: string; port: number; localAddress?: string; timeoutMs: number; count?: number; concurrency?: number; read?: boolean }): Promise<Outcome[]> {
    return (await this.call({ op: 'connect', count: 1, concurrency: 1, read: false, ...o })) as Outcome[];
  }

  async http(o: { host: string; port: number; timeoutMs: number; count: number; concurrency: number }): Promise<Outcome[]> {
    return (await this.call({ op: 'http', ...o })) as Outcome[];
  }

  proxy(config: ProxyConfig): Promise<unknown> {
    return this.call({ op: 'proxy', config });
  }

  /** One window of loopguard's probe agent in this namespace; its report. */
  async probeWindow(window: ProbeWindowRequest): Promise<ProbeReport> {
    return (await this.call({ op: 'probe', window })) as ProbeReport;
  }

  /** Closes stdin (the agent exits on its own), then kills it by pid if it lingers. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.kill(), 2000);
    await gone;
    clearTimeout(timer);
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}
