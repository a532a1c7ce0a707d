// When each probe of one window goes out, from one node: pure, so that the rate bounds are table-tested.
//
// Bounds (docs/probe.md "Rates"): a node sends at most `ratePerSecond` probes a second: the window is cut into equal
// slots of at least 1/rate seconds, one probe in each at a random place (so any one second holds at most rate + 1); a
// target is probed at least once per window when the window has room for every target (rate x window >= targets),
// and at most once per `minIntervalSeconds` on average. When it has no room, the window probes as many targets as
// fit, starting where the last window stopped, so every target still gets its turn every few windows.
//
// Jitter: the order of targets and each probe's place in its slot come from a PRNG seeded by the node and the window,
// so the nodes of a cluster do not probe the same VIP in step, and one node's windows differ.

export interface ScheduleInput {
  targets: number;
  windowSeconds: number;
  ratePerSecond: number;
  minIntervalSeconds: number;
  /** Which window this is (floor of its start over its length): rotates the targets a full window cannot hold. */
  windowIndex: number;
  /** E.g. the node's name: different nodes, different orders. */
  seed: string;
}

export interface ScheduledProbe {
  /** Milliseconds after the window's start. */
  atMs: number;
  /** Index into the plan's targets. */
  target: number;
}

export interface Schedule {
  probes: ScheduledProbe[];
  /** Probes per probed target this window. */
  perTarget: number;
  /** How many targets this window probes (all of them unless the window has no room). */
  probed: number;
}

/** FNV-1a: a 32-bit seed from a string. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** mulberry32: a small deterministic PRNG in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export function schedule(input: ScheduleInput): Schedule {
  const { targets, windowSeconds, ratePerSecond, minIntervalSeconds, windowIndex } = input;
  const capacity = Math.floor(windowSeconds * ratePerSecond);
  if (targets <= 0 || capacity <= 0) return { probes: [], perTarget: 0, probed: 0 };
  const probed = Math.min(targets, capacity);
  const perTarget = targets > capacity ? 1 : Math.max(1, Math.min(Math.floor(capacity / targets), Math.floor(windowSeconds / minIntervalSeconds)));
  const rand = random(hash(`${input.seed}/${windowIndex}`));
  // Which targets: all, or `probed` of them from where the previous window stopped.
  const start = targets > capacity ? (windowIndex * probed) % targets : 0;
  const chosen = Array.from({ length: probed }, (_, i) => (start + i) % targets);
  // A shuffled order (Fisher-Yates), repeated perTarget times: a target's probes are a round apart.
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
  }
  const total = probed * perTarget;
  const slotMs = (windowSeconds * 1000) / total;
  const probes: ScheduledProbe[] = [];
  for (let s = 0; s < total; s++) probes.push({ atMs: Math.floor((s + rand()) * slotMs), target: chosen[s % probed]! });
  return { probes, perTarget, probed };
}
