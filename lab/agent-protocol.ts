// What the lab's in-namespace agents answer (lab/agent.ts): one JSON request per line on stdin, one JSON answer per
// line on stdout. Shared by the agent and its client.

export interface ProxyConfig {
  listenHost: string;
  listenPort: number;
  /** Real servers (node IPs) on `nodePort`, tried from a random one on, as a CLB's scheduler would. */
  nodes: string[];
  nodePort: number;
  /** Give up on a real server that has not accepted the connection after this long, and try the next (TKE-LOOPBACK in tencent-cloud.md §7: ~4 s). */
  attemptTimeoutMs: number;
  /** passthrough: the real server sees the client's IP (via `shadows`); snat: the CLB's own 100.127 source, keepalive. */
  mode: 'passthrough' | 'snat';
  /** Client IP → the CLB-local address nftables rewrites to that client IP (lab/nft.ts). */
  shadows: Record<string, string>;
  snatSource: string;
}

export type AgentRequest =
  | { op: 'serve'; name: string; tcpPort: number; httpPort: number }
  | { op: 'connect'; host: string; port: number; localAddress?: string; timeoutMs: number; count: number; concurrency: number; read: boolean }
  | { op: 'http'; host: string; port: number; timeoutMs: number; count: number; concurrency: number }
  | { op: 'proxy'; config: ProxyConfig }
  | { op: 'probe'; window: ProbeWindowRequest }
  | { op: 'ping' };

/**
 * One window of loopguard's probe agent (src/probe/agent.ts, unmodified) run in the agent's namespace: the plan as
 * the operator would publish it, and the agent's flags. The answer is the LoopbackProbeReport the agent wrote.
 */
export interface ProbeWindowRequest {
  /** The node the agent reports for (its pod's spec.nodeName). */
  node: string;
  pod: string;
  /** Where the reports would live (loopguard's namespace). */
  namespace: string;
  /** The plan ConfigMap's plan.json, and the resourceVersion the agent would see. */
  planText: string;
  planVersion: string;
  ratePerSecond: number;
  minIntervalSeconds: number;
  minWindowSeconds: number;
}

/** One connection or request. `answer`: the node that answered (its backend writes its name). */
export interface Outcome {
  ok: boolean;
  ms: number;
  answer?: string;
  /** L7 only: real servers the CLB tried for this request. */
  attempts?: number;
  error?: string;
}

export type AgentResponse = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
