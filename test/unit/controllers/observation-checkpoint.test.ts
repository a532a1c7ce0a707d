// The observation checkpoint (src/cloud/observation-checkpoint.ts, src/controllers/observation-upkeep.ts): what is stored
// decodes to exactly what was cached, with its read times; anything foreign, corrupt or malformed is not trusted;
// entries older than the drift interval are dropped; a new leader's observer is seeded, never overwritten.
import { describe, expect, it, jest } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { ClbObserver } from '../../../src/cloud/clb-observer.js';
import type { ClbReader } from '../../../src/cloud/index.js';
import { CHECKPOINT_FORMAT, decodeCheckpoint, encodeCheckpoint, MAX_DECODED_BYTES, MAX_PART_BYTES, openCheckpoint, sealCheckpoint, splitParts, type CheckpointEntry } from '../../../src/cloud/observation-checkpoint.js';
import { fullIntervalMs } from '../../../src/controllers/drift-signal.js';
import { ObservationUpkeep } from '../../../src/controllers/observation-upkeep.js';
import type { LoadedParts } from '../../../src/kube/observation-store.js';

const NOW = Date.parse('2026-11-26T08:00:00Z');
const MIN = 60_000;
const REGION = 'ap-guangzhou';

function found(id: string, source = 1): CheckpointEntry['observation'] {
  return {
    state: 'Found',
    clb: {
      loadBalancerId: id,
      loadBalancerType: 'INTERNAL',
      addressIpVersion: 'IPV4',
      vips: ['10.0.0.5'],
      tags: { 'tke-createdBy-flag': 'yes', 'tke-clusterId': 'cls-abcdefgh' },
      status: 1,
      forward: 1,
      passToTarget: false,
      listeners: [
        { listenerId: `${id}-l1`, protocol: 'TCP', port: 80, healthCheck: { sourceIpType: source, healthSwitch: 1 }, health: { alive: 2, dead: 0 } },
        { listenerId: `${id}-l2`, protocol: 'HTTP', port: 8080, keepaliveEnable: 1, rules: [{ locationId: 'loc-1', domain: 'a.example', url: '/', healthCheck: { sourceIpType: 0 } }] },
      ],
    },
  };
}

const entry = (id: string, agoMs: number): CheckpointEntry => ({ id, at: NOW - agoMs, observation: found(id) });
const expectOk = { region: REGION, now: NOW, maxAgeMs: 5 * MIN };
const raw = (value: unknown) => [gzipSync(JSON.stringify(value))];
/** loopguard's key (the Secret's), and another writer's. */
const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 9);

describe('encodeCheckpoint / decodeCheckpoint', () => {
  it('round-trips every observation with its read time, across parts', () => {
    const entries = [entry('lb-aaaa0001', 10_000), { id: 'lb-aaaa0002', at: NOW - 20_000, observation: { state: 'NotFound' as const, loadBalancerId: 'lb-aaaa0002' } }];
    const parts = splitParts(encodeCheckpoint(REGION, NOW - 5_000, entries), 64);
    expect(parts.length).toBeGreaterThan(1);
    expect(decodeCheckpoint(parts, expectOk)).toEqual({ entries, expired: 0, writtenAt: NOW - 5_000 });
  });

  it('drops entries read a drift interval ago or earlier (due at once anyway) and counts them', () => {
    const entries = [entry('lb-aaaa0001', 4 * MIN), entry('lb-aaaa0002', 5 * MIN), entry('lb-aaaa0003', 9 * MIN)];
    const decoded = decodeCheckpoint([encodeCheckpoint(REGION, NOW, entries)], expectOk);
    expect(decoded).toEqual({ entries: [entries[0]], expired: 2, writtenAt: NOW });
  });

  it("keeps what the full re-read cycle still trusts: 3,000 CLBs read over a 25 min cycle (two-tier drift checks) all survive", () => {
    // 3,000 CLBs at 2 full reads per second: each is read every 25 min; the checkpoint's read times spread over it.
    const entries = Array.from({ length: 3000 }, (_, i) => entry(`lb-${String(i).padStart(8, '0')}`, i * 500));
    const cycle = (n: number) => fullIntervalMs(5 * MIN, n, 2);
    const decoded = decodeCheckpoint([encodeCheckpoint(REGION, NOW, entries)], { ...expectOk, maxAgeMs: cycle });
    expect(decoded).toMatchObject({ expired: 0 });
    // With the drift interval as the bound, 80 % would have been read cold after a restart.
    expect(decodeCheckpoint([encodeCheckpoint(REGION, NOW, entries)], expectOk)).toMatchObject({ expired: 2400 });
  });

  it('takes a read time ahead of the clock (within the tolerated skew) as now', () => {
    const ahead = { ...entry('lb-aaaa0001', 0), at: NOW + 30_000 };
    const decoded = decodeCheckpoint([encodeCheckpoint(REGION, NOW + 60_000, [ahead])], expectOk);
    expect(decoded).toMatchObject({ entries: [{ id: 'lb-aaaa0001', at: NOW }] });
  });

  it('refuses a checkpoint that inflates beyond its bound (a gzip bomb in the ConfigMaps)', () => {
    const bomb = gzipSync(Buffer.alloc(MAX_DECODED_BYTES + 1, 0x20));
    expect(bomb.length).toBeLessThan(MAX_PART_BYTES);
    expect(decodeCheckpoint([bomb], expectOk)).toEqual({ problem: expect.stringMatching(/not a gzip'd JSON checkpoint/) });
  });

  it('keeps 3,000 CLBs in one ConfigMap part', () => {
    const entries = Array.from({ length: 3000 }, (_, i) => entry(`lb-${String(i).padStart(8, '0')}`, i * 50));
    const buf = encodeCheckpoint(REGION, NOW, entries);
    expect(buf.length).toBeLessThan(MAX_PART_BYTES / 2);
    expect(splitParts(buf)).toHaveLength(1);
  });

  const problems: Array<[string, Buffer[], RegExp]> = [
    ['not gzip', [Buffer.from('{"format":"x"}')], /not a gzip'd JSON checkpoint/],
    ['a truncated part', [encodeCheckpoint(REGION, NOW, [entry('lb-aaaa0001', 1)]).subarray(0, 20)], /not a gzip'd JSON checkpoint/],
    ['another format', raw({ format: 'something/else', region: REGION, writtenAt: NOW, entries: [] }), /not a checkpoint of format/],
    ['another region', [encodeCheckpoint('ap-shanghai', NOW, [entry('lb-aaaa0001', 1)])], /written for region ap-shanghai, not ap-guangzhou/],
    ['written in the future', [encodeCheckpoint(REGION, NOW + 10 * MIN, [])], /in the future/],
    ['entries not a list', raw({ format: CHECKPOINT_FORMAT, region: REGION, writtenAt: NOW, entries: {} }), /entries is not a list/],
    ['a junk id', [encodeCheckpoint(REGION, NOW, [{ ...entry('lb-aaaa0001', 1), id: 'lb-../../x' }])], /entry 0 is not a valid CLB observation/],
    ['an observation of another CLB', [encodeCheckpoint(REGION, NOW, [{ ...entry('lb-aaaa0001', 1), observation: found('lb-aaaa0002') }])], /entry 0 is not/],
    ['a listener without a port', raw({ format: CHECKPOINT_FORMAT, region: REGION, writtenAt: NOW, entries: [{ id: 'lb-aaaa0001', at: NOW, observation: { state: 'Found', clb: { loadBalancerId: 'lb-aaaa0001', loadBalancerType: 'INTERNAL', listeners: [{ listenerId: 'l', protocol: 'TCP' }] } } }] }), /entry 0 is not/],
    ['a source that is text', raw({ format: CHECKPOINT_FORMAT, region: REGION, writtenAt: NOW, entries: [{ id: 'lb-aaaa0001', at: NOW, observation: { state: 'Found', clb: { loadBalancerId: 'lb-aaaa0001', loadBalancerType: 'INTERNAL', listeners: [{ listenerId: 'l', protocol: 'TCP', port: 80, healthCheck: { sourceIpType: '1' } }] } } }] }), /entry 0 is not/],
    ['NotObserved stored', raw({ format: CHECKPOINT_FORMAT, region: REGION, writtenAt: NOW, entries: [{ id: 'lb-aaaa0001', at: NOW, observation: { state: 'NotObserved' } }] }), /entry 0 is not/],
    ['a read time after the write', [encodeCheckpoint(REGION, NOW - 10 * MIN, [entry('lb-aaaa0001', 0)])], /entry 0 is not/],
    ['a CLB twice', [encodeCheckpoint(REGION, NOW, [entry('lb-aaaa0001', 1), entry('lb-aaaa0001', 2)])], /entry 1 repeats CLB lb-aaaa0001/],
  ];
  it.each(problems)('does not trust %s', (_what, parts, problem) => {
    const decoded = decodeCheckpoint(parts, expectOk);
    expect(decoded).toEqual({ problem: expect.stringMatching(problem) });
  });
});

describe('sealCheckpoint / openCheckpoint (issue 38 #6: only what loopguard wrote is seeded)', () => {
  const encoded = encodeCheckpoint(REGION, NOW, [entry('lb-aaaa0001', 1)]);
  it('opens what the same key sealed, across parts', () => {
    const parts = splitParts(sealCheckpoint(KEY, encoded), 64);
    expect(openCheckpoint(KEY, Buffer.concat(parts))).toEqual(encoded);
  });
  const refused: Array<[string, Buffer, Buffer]> = [
    ['sealed with another key (a forged, well-formed checkpoint)', KEY, sealCheckpoint(OTHER_KEY, encoded)],
    ['not sealed at all (a v1 checkpoint, or written by hand)', KEY, encoded],
    ['one byte changed after sealing', KEY, Buffer.from(sealCheckpoint(KEY, encoded).map((b, i) => (i === 40 ? b ^ 1 : b)))],
    ['entries appended after sealing', KEY, Buffer.concat([sealCheckpoint(KEY, encoded), Buffer.from('x')])],
    ['only a seal', KEY, sealCheckpoint(KEY, Buffer.alloc(0))],
    ['a key too short to be the Secret', Buffer.alloc(4), sealCheckpoint(Buffer.alloc(4), encoded)],
  ];
  it.each(refused)('refuses %s', (_what, key, sealed) => {
    expect(openCheckpoint(key, sealed)).toEqual({ problem: expect.stringMatching(/^not sealed with loopguard's checkpoint key/) });
  });
});

/** A CLB reader that counts reads and knows one CLB, lb-aaaa0001, with its listener on source `source`. */
function reader(source: { value: 0 | 1 }) {
  const reads: string[] = [];
  const r: ClbReader = {
    describeLoadBalancers: async (ids) => {
      reads.push(...ids);
      return ids.filter((id) => id === 'lb-aaaa0001').map((id) => ({ loadBalancerId: id, type: 'INTERNAL', vips: ['10.0.0.5'], tags: {}, status: 1, forward: 1, passToTarget: false, addressIpVersion: 'IPV4' }) as never);
    },
    describeListeners: async (id) => [{ listenerId: `${id}-l1`, name: 'l1', protocol: 'TCP', port: 80, healthCheck: { HealthSwitch: 1, SourceIpType: source.value }, rules: [] }] as never,
    describeTargetHealth: async () => [],
  };
  return { r, reads };
}

function memoryStore() {
  const saved: { parts: Buffer[]; id: string }[] = [];
  let loaded: LoadedParts = { absent: true };
  return {
    saved,
    set: (l: LoadedParts) => (loaded = l),
    store: { load: async () => loaded, save: async (parts: readonly Buffer[], id: string) => void saved.push({ parts: [...parts], id }), key: async () => KEY },
  };
}

describe('ObservationUpkeep: the checkpoint', () => {
  const logs: string[] = [];
  const logger = { debug: () => undefined, info: (m: string) => void logs.push(m), warn: (m: string) => void logs.push(`WARN ${m}`) };
  const scheduler = { intervalMs: 5 * MIN, fullIntervalMs: () => 5 * MIN };
  const noSignal = { spread: () => undefined, forget: () => undefined };
  /** The leader's upkeep with a checkpoint in `store`; `mayWrite`: it leads. */
  const checkpointer = (observer: ClbObserver, store: ReturnType<typeof memoryStore>['store'], mayWrite = true) =>
    new ObservationUpkeep({ observer, signal: noSignal, scheduler, named: () => new Set(), logger, checkpoint: { store, region: REGION, mayWrite: () => mayWrite } });

  it("saves the leader's observations, only when they changed, and seeds a new leader's observer with their read times", async () => {
    const source = { value: 1 as 0 | 1 };
    const a = reader(source);
    const mem = memoryStore();
    const first = new ClbObserver(a.r);
    await first.observe(['lb-aaaa0001', 'lb-bbbb0002'], 5 * MIN);
    const readAt = first.observedAt('lb-aaaa0001');
    const writer = checkpointer(first, mem.store);
    await writer.save();
    await writer.save();
    expect(mem.saved).toHaveLength(1);
    first.listenerSourceWritten('lb-aaaa0001', 'lb-aaaa0001-l1', 0);
    await writer.save();
    expect(mem.saved).toHaveLength(2);

    const b = reader(source);
    const next = new ClbObserver(b.r);
    mem.set({ parts: mem.saved[1]?.parts ?? [] });
    const seeded = await checkpointer(next, mem.store).restore();
    // What was seeded, with when it was read (the health signal spreads its checks from it, HealthSignal.spread).
    expect(seeded.map((e) => e.id).sort()).toEqual(['lb-aaaa0001', 'lb-bbbb0002']);
    expect(seeded.find((e) => e.id === 'lb-aaaa0001')?.at).toBe(readAt);
    expect(next.observedAt('lb-aaaa0001')).toBe(readAt);
    expect(next.seeded('lb-aaaa0001')).toBe(true);
    expect(next.cached('lb-aaaa0001')).toEqual(first.cached('lb-aaaa0001'));
    expect(next.cached('lb-bbbb0002')).toEqual({ state: 'NotFound', loadBalancerId: 'lb-bbbb0002' });
    // Seeded facts carry no raw listeners: a writer has to read the CLB (round.ts reads it before any write).
    expect(next.rawListeners('lb-aaaa0001')).toBeUndefined();
    // Judging from them reads nothing; a read of this process replaces the seeded entry.
    await next.observe(['lb-aaaa0001', 'lb-bbbb0002'], 5 * MIN);
    expect(b.reads).toEqual([]);
    await next.reread(['lb-aaaa0001']);
    expect(next.seeded('lb-aaaa0001')).toBe(false);
    expect(next.rawListeners('lb-aaaa0001')).toHaveLength(1);
  });

  it('a standby writes nothing; a seed never replaces what this process read itself', async () => {
    const a = reader({ value: 1 });
    const mem = memoryStore();
    const observer = new ClbObserver(a.r);
    await observer.observe(['lb-aaaa0001'], 5 * MIN);
    await checkpointer(observer, mem.store, false).save();
    expect(mem.saved).toEqual([]);
    const own = observer.observedAt('lb-aaaa0001');
    expect(observer.seed([{ id: 'lb-aaaa0001', at: 1, observation: { state: 'NotFound', loadBalancerId: 'lb-aaaa0001' } }])).toBe(0);
    expect(observer.observedAt('lb-aaaa0001')).toBe(own);
    expect(observer.seeded('lb-aaaa0001')).toBe(false);
  });

  const cold: Array<[string, () => Promise<LoadedParts>, RegExp]> = [
    ['no checkpoint', async () => ({ absent: true }), /^No observation checkpoint/],
    ['parts of two writes', async () => ({ problem: 'loopguard-observations-1 is missing or of another write' }), /^WARN Ignoring the observation checkpoint/],
    ['a corrupt checkpoint', async () => ({ parts: [Buffer.from('junk')] }), /^WARN Ignoring the observation checkpoint/],
    // Well-formed, fresh, every backend alive on 100.64: but not loopguard's (issue 38 #6).
    ['a forged checkpoint', async () => ({ parts: splitParts(sealCheckpoint(OTHER_KEY, encodeCheckpoint(REGION, Date.now(), [{ id: 'lb-aaaa0001', at: Date.now(), observation: found('lb-aaaa0001') }])), 64) }), /^WARN Ignoring the observation checkpoint/],
    ['an unsealed one', async () => ({ parts: [encodeCheckpoint(REGION, Date.now(), [{ id: 'lb-aaaa0001', at: Date.now(), observation: found('lb-aaaa0001') }])] }), /^WARN Ignoring the observation checkpoint/],
    ['an apiserver error', async () => Promise.reject(new Error('forbidden')), /^WARN Could not read the observation checkpoint/],
  ];
  it.each(cold)('starts cold on %s, saying why', async (_what, load, line) => {
    logs.length = 0;
    const observer = new ClbObserver(reader({ value: 1 }).r);
    expect(await checkpointer(observer, { load, save: async () => undefined, key: async () => KEY }).restore()).toEqual([]);
    expect([...observer.entries()]).toEqual([]);
    expect(logs).toEqual([expect.stringMatching(line)]);
  });

  it('restore spreads the health checks of the found, non-classic CLBs seeded over half the drift interval', async () => {
    const classic = found('lb-cccc0003');
    if (classic.state === 'Found') classic.clb.forward = 0;
    const entries: CheckpointEntry[] = [
      { id: 'lb-aaaa0001', at: NOW - MIN, observation: found('lb-aaaa0001') },
      { id: 'lb-cccc0003', at: NOW - MIN, observation: classic },
      { id: 'lb-dddd0004', at: NOW - MIN, observation: { state: 'NotFound', loadBalancerId: 'lb-dddd0004' } },
    ];
    const mem = memoryStore();
    mem.set({ parts: splitParts(sealCheckpoint(KEY, encodeCheckpoint(REGION, NOW, entries))) });
    const spreads: unknown[] = [];
    const signal = { spread: (seeded: readonly CheckpointEntry[], now: number, span: number) => void spreads.push({ ids: seeded.map((e) => e.id), now, span }), forget: () => undefined };
    const u = new ObservationUpkeep({ observer: new ClbObserver(reader({ value: 1 }).r), signal, scheduler, named: () => new Set(), logger, checkpoint: { store: mem.store, region: REGION, mayWrite: () => true }, now: () => NOW });
    expect((await u.restore()).map((e) => e.id)).toEqual(['lb-aaaa0001', 'lb-cccc0003', 'lb-dddd0004']);
    expect(spreads).toEqual([{ ids: ['lb-aaaa0001'], now: NOW, span: 150_000 }]);
  });

  it('start writes the checkpoint every minute at a 5 min drift interval, only when the cache changed', async () => {
    jest.useFakeTimers();
    try {
      const observer = new ClbObserver(reader({ value: 1 }).r);
      await observer.observe(['lb-aaaa0001'], 5 * MIN);
      const mem = memoryStore();
      const u = checkpointer(observer, mem.store);
      u.start();
      await jest.advanceTimersByTimeAsync(MIN - 1);
      expect(mem.saved).toHaveLength(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(mem.saved).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(MIN);
      expect(mem.saved).toHaveLength(1);
      observer.listenerSourceWritten('lb-aaaa0001', 'lb-aaaa0001-l1', 0);
      await jest.advanceTimersByTimeAsync(MIN);
      expect(mem.saved).toHaveLength(2);
      await u.stop(2_000);
    } finally {
      jest.useRealTimers();
    }
  });

  it('stop writes the checkpoint once more while leading, and nothing as a standby', async () => {
    for (const leads of [true, false]) {
      const observer = new ClbObserver(reader({ value: 1 }).r);
      await observer.observe(['lb-aaaa0001'], 5 * MIN);
      const mem = memoryStore();
      const u = checkpointer(observer, mem.store, leads);
      u.start();
      await u.stop(2_000);
      expect(mem.saved).toHaveLength(leads ? 1 : 0);
    }
  });
});
