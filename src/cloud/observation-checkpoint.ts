// The observation checkpoint (docs/execution.md "Restart"): what the leader's ClbObserver last read of each CLB and
// when, so that a new leader starts from it instead of reading every CLB again before it can judge a single target.
// Only the model's facts (ClbObservation), never the SDK's listener structs: a write reads its CLB fresh first
// (round.ts), so nothing written is ever built from a checkpoint. Pure: encode to gzip'd JSON, seal, split into
// parts that fit a ConfigMap, join, open and decode. A checkpoint is stored input that anyone with write access to
// loopguard's namespace could edit, and a seeded entry is judged like a read (a forged "100.64 source, all backends
// alive" would show Mitigated until the next drift read; issue 38 #6): so it is sealed with an HMAC whose key is in
// a Secret only loopguard's ServiceAccount (and that namespace's admins) may read (docs/security.md "Trust model").
// One that is not sealed with that key, does not decode, is of another format or region, or holds an entry that
// is not a well-formed observation is not trusted (the caller logs why and starts cold, as without one).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { isClbId } from '../api/annotations.js';
import type { ClbObservation } from '../model/facts.js';

// v2: sealed (v1 checkpoints, unsealed, are ignored once: the first leader after the upgrade reads every CLB).
export const CHECKPOINT_FORMAT = 'loopguard.dev/clb-observations/v2';
/** HMAC-SHA256: the seal's length, ahead of the gzip'd checkpoint. */
const SEAL_BYTES = 32;
/** The key's length (bytes of randomness in the Secret). */
export const CHECKPOINT_KEY_BYTES = 32;
/** A ConfigMap holds 1 MiB in all; a part stays well below it (the name, labels and base64 of binaryData count too). */
export const MAX_PART_BYTES = 700 * 1024;
/** At most this many ConfigMaps (RBAC names each one); a larger checkpoint is not written. */
export const MAX_PARTS = 4;
/** The most a checkpoint may inflate to: 3,000 CLBs take about 2 MB of JSON. */
export const MAX_DECODED_BYTES = 64 << 20;
/** Clock skew tolerated on read times from the future (ms). */
const FUTURE_SKEW_MS = 60_000;

export type StoredObservation = Exclude<ClbObservation, { state: 'NotObserved' }>;

export interface CheckpointEntry {
  id: string;
  /** When loopguard read the CLB (ms since the epoch). */
  at: number;
  observation: StoredObservation;
}

export interface Checkpoint {
  format: typeof CHECKPOINT_FORMAT;
  /** The CLB region the observations came from: another region's (a moved Deployment) names other CLBs. */
  region: string;
  writtenAt: number;
  entries: CheckpointEntry[];
}

export function encodeCheckpoint(region: string, writtenAt: number, entries: readonly CheckpointEntry[]): Buffer {
  const c: Checkpoint = { format: CHECKPOINT_FORMAT, region, writtenAt, entries: [...entries] };
  return gzipSync(JSON.stringify(c));
}

function seal(key: Buffer, encoded: Buffer): Buffer {
  return createHmac('sha256', key).update(encoded).digest();
}

/** The encoded checkpoint with its seal ahead of it: only who holds the key can write one that opens. */
export function sealCheckpoint(key: Buffer, encoded: Buffer): Buffer {
  return Buffer.concat([seal(key, encoded), encoded]);
}

/** The encoded checkpoint inside `sealed` (its parts joined), or the problem when `key` did not seal it. */
export function openCheckpoint(key: Buffer, sealed: Buffer): Buffer | { problem: string } {
  const encoded = sealed.subarray(SEAL_BYTES);
  if (key.length < CHECKPOINT_KEY_BYTES || sealed.length <= SEAL_BYTES || !timingSafeEqual(sealed.subarray(0, SEAL_BYTES), seal(key, encoded))) {
    return { problem: "not sealed with loopguard's checkpoint key (written by another writer, or before the key changed)" };
  }
  return encoded;
}

/** The encoded checkpoint in parts of at most `max` bytes (joined back in order by concatenation). */
export function splitParts(buf: Buffer, max = MAX_PART_BYTES): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += max) parts.push(buf.subarray(i, i + max));
  return parts.length > 0 ? parts : [buf];
}

export type Decoded = { entries: CheckpointEntry[]; expired: number; writtenAt: number } | { problem: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const opt = (v: unknown, check: (x: unknown) => boolean) => v === undefined || check(v);
const strings = (v: unknown) => Array.isArray(v) && v.every(isStr);
const stringMap = (v: unknown) => isObj(v) && Object.values(v).every(isStr);
const healthCheck = (v: unknown) => isObj(v) && opt(v['sourceIpType'], isNum) && opt(v['healthSwitch'], isNum);
const backendHealth = (v: unknown) => isObj(v) && isNum(v['alive']) && isNum(v['dead']);
const rule = (v: unknown) => isObj(v) && isStr(v['locationId']) && isStr(v['domain']) && isStr(v['url']) && opt(v['healthCheck'], healthCheck) && opt(v['health'], backendHealth);
const listener = (v: unknown) =>
  isObj(v) &&
  isStr(v['listenerId']) &&
  isStr(v['protocol']) &&
  isNum(v['port']) &&
  opt(v['healthCheck'], healthCheck) &&
  opt(v['keepaliveEnable'], isNum) &&
  opt(v['rules'], (r) => Array.isArray(r) && r.every(rule)) &&
  opt(v['health'], backendHealth);

/** Whether `v` is a well-formed observation of CLB `id` (every field the model reads has its type). */
export function validObservation(id: string, v: unknown): v is StoredObservation {
  if (!isObj(v)) return false;
  if (v['state'] === 'NotFound') return v['loadBalancerId'] === id;
  if (v['state'] !== 'Found' || !isObj(v['clb'])) return false;
  const c = v['clb'];
  return (
    c['loadBalancerId'] === id &&
    isStr(c['loadBalancerType']) &&
    opt(c['addressIpVersion'], isStr) &&
    opt(c['vips'], strings) &&
    opt(c['ipv6Address'], isStr) &&
    opt(c['tags'], stringMap) &&
    opt(c['status'], isNum) &&
    opt(c['forward'], isNum) &&
    opt(c['passToTarget'], (x) => typeof x === 'boolean') &&
    Array.isArray(c['listeners']) &&
    c['listeners'].every(listener)
  );
}

/**
 * The checkpoint's entries still worth trusting: read within `maxAgeMs` of `now` (older ones would be due for a
 * drift check at once, so they are dropped and counted). All or nothing: one malformed entry makes the whole
 * checkpoint suspect.
 */
export function decodeCheckpoint(parts: readonly Buffer[], expect: { region: string; now: number; maxAgeMs: number | ((entries: number) => number) }): Decoded {
  let c: unknown;
  try {
    // Bounded: stored input that inflates without limit (a gzip bomb in the ConfigMaps) must not take the pod's memory.
    c = JSON.parse(gunzipSync(Buffer.concat(parts), { maxOutputLength: MAX_DECODED_BYTES }).toString('utf8'));
  } catch (err) {
    return { problem: `not a gzip'd JSON checkpoint (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!isObj(c) || c['format'] !== CHECKPOINT_FORMAT) return { problem: `not a checkpoint of format ${CHECKPOINT_FORMAT}` };
  if (c['region'] !== expect.region) return { problem: `written for region ${String(c['region'])}, not ${expect.region}` };
  const writtenAt = c['writtenAt'];
  if (!isNum(writtenAt) || writtenAt > expect.now + FUTURE_SKEW_MS) return { problem: 'writtenAt is missing or in the future' };
  if (!Array.isArray(c['entries'])) return { problem: 'entries is not a list' };
  const entries: CheckpointEntry[] = [];
  const seen = new Set<string>();
  let expired = 0;
  // The full re-read cycle grows with the number of CLBs (two-tier drift checks): so does the age worth trusting.
  const maxAgeMs = typeof expect.maxAgeMs === 'number' ? expect.maxAgeMs : expect.maxAgeMs(c['entries'].length);
  for (const [i, e] of c['entries'].entries()) {
    if (!isObj(e) || !isStr(e['id']) || !isClbId(e['id']) || !isNum(e['at']) || e['at'] > writtenAt + FUTURE_SKEW_MS || !validObservation(e['id'], e['observation'])) {
      return { problem: `entry ${i} is not a valid CLB observation` };
    }
    if (seen.has(e['id'])) return { problem: `entry ${i} repeats CLB ${e['id']}` };
    seen.add(e['id']);
    if (expect.now - e['at'] >= maxAgeMs) expired++;
    // A read time ahead of this process's clock (within the tolerated skew) counts as now: it must not put drift checks off.
    else entries.push({ id: e['id'], at: Math.min(e['at'], expect.now), observation: e['observation'] });
  }
  return { entries, expired, writtenAt };
}
