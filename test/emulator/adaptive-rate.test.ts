/**
 * The adaptive per-action rate (src/cloud/adaptive-rate.ts) against the emulator's per-account quota (20 req/s per
 * action, tencent-cloud.md §3): two loopguard CLB clients with their own credentials on one account, each allowed the
 * whole quota (--cloud-rate-limit 20) and each with more calls to make than the quota takes, settle near half of it
 * each, with few RequestLimitExceeded answers — and without the adaptive rate, the same two are throttled far more.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator, StatsSnapshot } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import { TencentClbClient } from '../../src/cloud/index.js';
import { localTkeCallers } from '../support/local-tke.js';

const QUOTA = 20;
let emu: ClbEmulator;
const clients: TencentClbClient[] = [];

beforeEach(async () => {
  emu = await startClbEmulator({ rps: QUOTA, callers: localTkeCallers(['a', 'b']).slice(2) });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await emu.close();
});

function client(caller: string, adaptive: boolean): TencentClbClient {
  const credentials = emu.callers[caller];
  if (!credentials) throw new Error(`no caller ${caller}`);
  const c = new TencentClbClient({
    region: emu.region,
    credentials,
    endpoint: emu.url,
    throttle: { defaultBudget: { rps: QUOTA, concurrency: 16 }, adaptive },
    retry: { maxAttempts: 100, deadlineMs: 600_000 },
  });
  clients.push(c);
  return c;
}

/** Keeps `workers` calls of one action in flight until `stop`: more demand than the quota. */
function load(c: TencentClbClient, stop: AbortSignal, workers = 12): Promise<void> {
  const worker = async (): Promise<void> => {
    while (!stop.aborted) await c.describeLoadBalancers(['lb-00000000'], { signal: stop }).catch(() => undefined);
  };
  return Promise.all(Array.from({ length: workers }, worker)).then(() => undefined);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (s: StatsSnapshot, caller: string, outcome: string) => s.byCaller[caller]?.['DescribeLoadBalancers']?.[outcome] ?? 0;

/** a alone for 4 s, then b joins; the window measured is the last `windowMs` of `totalMs`. */
async function run(adaptive: boolean, totalMs = 26_000, windowMs = 12_000) {
  const a = client('a', adaptive);
  const b = client('b', adaptive);
  const stop = new AbortController();
  const loads = [load(a, stop.signal)];
  await sleep(4_000);
  loads.push(load(b, stop.signal));
  await sleep(totalMs - 4_000 - windowMs);
  await emu.admin.markStats('settled');
  await sleep(windowMs);
  const s = await emu.admin.statsSince('settled');
  const rates = { a: a.rateLimits()['DescribeLoadBalancers'] ?? NaN, b: b.rateLimits()['DescribeLoadBalancers'] ?? NaN };
  stop.abort();
  await Promise.all(loads);
  const ok = { a: count(s, 'a', 'OK'), b: count(s, 'b', 'OK') };
  const rle = count(s, 'a', 'RequestLimitExceeded') + count(s, 'b', 'RequestLimitExceeded');
  return { ok, rle, rates, seconds: windowMs / 1000 };
}

describe('two clients on one account', () => {
  it('settle near half the quota each, with few RequestLimitExceeded answers', async () => {
    const { ok, rle, rates, seconds } = await run(true);
    const total = ok.a + ok.b;
    const figures = { ok, rle, rates, seconds };
    // Each near half of what went through; together close to the quota (the floor allows for a loaded machine);
    // few throttles; what they allow themselves is below the ceiling and near the quota together.
    const problems = [
      [ok.a / total > 0.3 && ok.a / total < 0.7, 'a share near half'],
      [total / seconds > 0.6 * QUOTA && total / seconds <= QUOTA + 1, 'together near the quota'],
      [rle / (total + rle) < 0.05 && rle / seconds < 0.5, 'few RequestLimitExceeded'],
      [rates.a < QUOTA && rates.b < QUOTA, 'both below the ceiling'],
      [rates.a + rates.b > 0.6 * QUOTA && rates.a + rates.b < 1.5 * QUOTA, 'rates together near the quota'],
    ].flatMap(([held, what]) => (held ? [] : [what]));
    expect({ problems, figures }).toEqual({ problems: [], figures });
  }, 60_000);

  it('at a fixed rate (--cloud-rate-adaptive=false) the same two are throttled many times more', async () => {
    const fixed = await run(false, 16_000, 8_000);
    expect(fixed.rates).toEqual({ a: QUOTA, b: QUOTA });
    // Both keep asking for the whole quota; the pause after each throttle makes no lasting room for the other.
    expect({ throttledPerSecond: fixed.rle / fixed.seconds > 1, fixed }).toEqual({ throttledPerSecond: true, fixed });
  }, 60_000);
});
