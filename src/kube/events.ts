// Events on targets and policies, deduplicated like client-go's recorder: the same (object, type, reason,
// message) within the window bumps `count` and `lastTimestamp` on the existing Event instead of creating
// another, so a reconcile loop never floods `kubectl describe` (client-go tools/record's event correlator).
//
// A standing problem (an invalid annotation: true in every round until someone fixes it) is one Event, not one per
// round: `recordStanding` writes it once, then only re-asserts it (count + 1 on the same Event) every
// STANDING_REFRESH_MS, the events.k8s.io series refresh, so it outlives the apiserver's Event TTL (1 h by default)
// while costing no write per round. After a restart or a leader change the Event already on the object is found and
// adopted instead of a second one being created.
//
// Events are written at a steady pace (EVENTS_PER_SECOND), in the order they were recorded, as client-go's broadcaster
// queue and the kubelet's --event-qps spread them: an Audit over thousands of at-risk targets would otherwise burst
// thousands of writes right after the first round. Recording returns at once; the Event keeps the time it was recorded.
import { createHash } from 'node:crypto';
import PQueue from 'p-queue';
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { printable } from '../api/text.js';
import { settlesWithin } from '../runtime/settle.js';

export type EventType = 'Normal' | 'Warning';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  last: number;
  /** How long the entry is worth keeping (the dedup window, or the standing refresh). */
  keepMs: number;
}

/** An Event message: printable (it may quote user-written annotations) and within the Events API's note bound. */
const MAX_MESSAGE = 1024;
/** events.k8s.io's series refresh (client-go tools/events): an ongoing series is re-asserted this often. */
export const STANDING_REFRESH_MS = 30 * 60_000;

/** Event writes per second: the kubelet's default event QPS (eventRecordQPS); at 10/s bench:idle's Events took minutes. */
export const EVENTS_PER_SECOND = 50;
/** Events waiting beyond this are dropped: a memory bound when the apiserver cannot keep up. */
export const MAX_QUEUED_EVENTS = 20_000;

export class EventRecorder {
  private readonly core: CoreV1Api;
  private readonly seen = new Map<string, Seen>();
  /** One write at a time, at most EVENTS_PER_SECOND a second, in recording order (so deduplication never races). */
  private readonly queue: PQueue;
  /** Standing Events queued and not written yet (so each is queued once). */
  private readonly queued = new Set<string>();

  constructor(
    kc: KubeConfig,
    private readonly component = 'loopguard',
    private readonly windowMs = 10 * 60_000,
    /** A write that failed, with the Event's reason and object (written later than recorded: the log says which). */
    private readonly onError: (err: unknown, event: { reason: string; object: string }) => void = () => undefined,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.queue = new PQueue({ concurrency: 1, intervalCap: EVENTS_PER_SECOND, interval: 1000 });
  }

  /** Events recorded and not written yet. */
  get pending(): number {
    return this.queue.size + this.queue.pending;
  }

  /** Waits until every recorded Event is written, or `timeoutMs` (shutdown: what is left is lost with the process). */
  flush(timeoutMs: number): Promise<boolean> {
    return settlesWithin(this.queue.onIdle(), timeoutMs);
  }

  /**
   * Queues the write of the Event `key` (about `target`, for `reason`); never throws and never waits for it: an Event
   * must neither fail nor hold up a reconcile. A failed write goes to `failed`.
   */
  private later(key: string, target: EventTarget, reason: string, write: () => Promise<void>, onDropped?: () => void): Promise<void> {
    if (this.queue.size >= MAX_QUEUED_EVENTS) onDropped?.();
    else void this.queue.add(() => write().catch((err: unknown) => this.failed(key, err, target, reason)));
    return Promise.resolve();
  }

  /** Recorded now, written in turn (see the header). */
  record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const text = printable(message, MAX_MESSAGE);
    const key = this.key(target, type, reason, text);
    const now = Date.now();
    return this.later(key, target, reason, async () => {
      const previous = this.seen.get(key);
      if (previous && now - previous.last < this.windowMs) await this.bump(previous, now);
      else await this.create(key, target, type, reason, text, now, this.windowMs);
    });
  }

  /**
   * A problem that holds until someone fixes it: one Event per (object, reason, message), written on first sight,
   * re-asserted at most every STANDING_REFRESH_MS; every other call writes nothing. Never throws.
   */
  recordStanding(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const text = printable(message, MAX_MESSAGE);
    const key = this.key(target, type, reason, text);
    const now = Date.now();
    // Checked again in turn: a standing problem seen in every round queues one write, not one per round.
    const fresh = () => now - (this.seen.get(key)?.last ?? -Infinity) < STANDING_REFRESH_MS;
    if (fresh() || this.queued.has(key)) return Promise.resolve();
    this.queued.add(key);
    return this.later(key, target, reason, async () => {
      this.queued.delete(key);
      if (fresh()) return;
      const previous = this.seen.get(key);
      const existing = previous ?? (await this.find(target, type, reason, text));
      if (!existing) return this.create(key, target, type, reason, text, now, STANDING_REFRESH_MS);
      this.seen.set(key, existing);
      // Adopted from an earlier process and still fresh: nothing to say yet.
      if (!previous && now - existing.last < STANDING_REFRESH_MS) return;
      await this.bump(existing, now);
    }, () => this.queued.delete(key));
  }

  /** A digest of what makes two Events the same: kept for the dedup window per Event, and the message alone is up to 1 KiB. */
  private key(target: EventTarget, type: EventType, reason: string, text: string): string {
    return createHash('sha256').update([target.kind, target.namespace, target.name, target.uid ?? '', type, reason, text].join('\u0000')).digest('base64url');
  }

  private async bump(seen: Seen, now: number): Promise<void> {
    seen.count++;
    seen.last = now;
    await this.core.patchNamespacedEvent(
      { name: seen.name, namespace: seen.namespace, body: { count: seen.count, lastTimestamp: new Date(now).toISOString() } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  private async create(key: string, target: EventTarget, type: EventType, reason: string, text: string, now: number, keepMs: number): Promise<void> {
    const timestamp = new Date(now);
    const namespace = eventNamespace(target);
    const involvedObject = { apiVersion: target.apiVersion, kind: target.kind, namespace: target.namespace, name: target.name, uid: target.uid };
    const source = { source: { component: this.component }, reportingComponent: this.component };
    const body = { metadata: { generateName: `${target.name}.`, namespace }, involvedObject, type, reason, message: text, ...source, firstTimestamp: timestamp, lastTimestamp: timestamp, count: 1 };
    const created = await this.core.createNamespacedEvent({ namespace, body });
    this.seen.set(key, { name: created.metadata?.name ?? '', namespace, count: 1, last: now, keepMs });
    this.prune(now);
  }

  /** This component's standing Event for the same object, reason and message, as an earlier process left it (one LIST). */
  private async find(target: EventTarget, type: EventType, reason: string, text: string): Promise<Seen | undefined> {
    const fields = [`involvedObject.kind=${target.kind}`, `involvedObject.name=${target.name}`, `reason=${reason}`, `type=${type}`];
    if (target.uid) fields.push(`involvedObject.uid=${target.uid}`);
    const list = await this.core.listNamespacedEvent({ namespace: eventNamespace(target), fieldSelector: fields.join(',') });
    const mine = list.items.filter((e) => e.message === text && (e.source?.component ?? e.reportingComponent) === this.component && e.metadata?.name);
    const latest = mine.sort((a, b) => lastSeen(b) - lastSeen(a))[0];
    if (!latest) return undefined;
    return { name: latest.metadata?.name ?? '', namespace: eventNamespace(target), count: latest.count ?? 1, last: lastSeen(latest), keepMs: STANDING_REFRESH_MS };
  }

  private failed(key: string, err: unknown, target: EventTarget, reason: string): void {
    // The event may have expired (TTL 1 h) while we still remembered it: start a fresh one next time.
    if (err instanceof ApiException && err.code === 404) this.seen.delete(key);
    this.onError(err, { reason, object: `${target.kind}/${target.namespace}/${target.name}` });
  }

  private prune(now: number): void {
    if (this.seen.size < 4096) return;
    for (const [k, v] of this.seen) if (now - v.last > v.keepMs) this.seen.delete(k);
  }
}

/** An Event's timestamps, as the API (Date) or its JSON (string) gives them. */
export type EventTimes = { [K in 'lastTimestamp' | 'eventTime' | 'firstTimestamp']?: Date | string } & { metadata?: { creationTimestamp?: Date | string } };

/** When an Event last happened (ms): its newest timestamp set; 0 when none is readable. */
export function lastSeen(e: EventTimes): number {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  const ms = t === undefined ? NaN : new Date(t).getTime();
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * Where an Event about `target` lives: its namespace, or `default` for a cluster-scoped object (a ClusterLoopbackPolicy),
 * as client-go's recorder does (an Event is namespaced; kubectl describe of a cluster-scoped object searches all).
 */
function eventNamespace(target: EventTarget): string {
  return target.namespace || 'default';
}
