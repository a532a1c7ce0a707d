// The printed report of a lab run (pure): one table per measurement.
import type { LabResults } from './scenarios.js';
import { counts, formatMs, rate } from './stats.js';
import { table } from './table.js';

const SOURCE = { vip: 'VIP (SourceIpType 0)', range: '100.64 (SourceIpType 1)' } as const;
const MODE = { passthrough: 'pass-through (client IP kept)', snat: 'SNAT/keepalive (100.127.0.1)' } as const;

export function report(r: LabResults): string[] {
  const health = table(
    ['probe source', 'VIP bound on nodes', 'alive', 'SYN seen on eth0', 'SYN delivered', 'martian-source drops'],
    r.health.map((h) => [SOURCE[h.source], h.vipBound ? 'yes' : 'no', rate({ ok: h.alive, total: h.probes }), String(h.seen), String(h.delivered), String(h.martianDrops)]),
  );
  const l4 = table(
    ['path', 'connected', 'answered by', 'kernel'],
    r.l4.map((row) => [row.label, rate(row.summary), counts(row.summary.byNode), row.note]),
  );
  const l7 = table(
    ['L7 mode', 'ok', 'p50', 'p90', 'p99', 'max', 'retried', 'kernel'],
    r.l7.map((row) => {
      const s = row.summary;
      return [MODE[row.mode], rate(s), formatMs(s.p50), formatMs(s.p90), formatMs(s.p99), formatMs(s.max), String(s.retried), row.note];
    }),
  );
  return [
    `(a) CLB health checks → each node's NodePort (TCP), ${r.profile.probesPerNode} per node and row, ${r.profile.connectTimeoutMs} ms timeout`,
    ...health,
    '',
    `(b) L4 CLB, client pod on node1 → VIP:81 → NodePort, client IP preserved, no retry (${r.profile.connectTimeoutMs} ms connect timeout)`,
    ...l4,
    '',
    `(c) L7 CLB, client pod on node1 → VIP:80, ${r.l7[0]?.summary.total ?? 0} requests per mode, ${r.profile.concurrency} at a time; real-server timeout ${r.l7TimeoutMs} ms, then the next`,
    ...l7,
  ];
}
