// Events on targets and policies, deduplicated like client-go's recorder: the same (object, type, reason,
// message) within the window bumps `count` and `lastTimestamp` on the existing Event instead of creating
// another, so a reconcile loop never floods `kubectl describe` (controller-conventions.md §2.8).
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1ObjectReference } from '@kubernetes/client-node';

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
}

export class EventRecorder {
  private readonly core: CoreV1Api;
  private readonly seen = new Map<string, Seen>();

  constructor(
    kc: KubeConfig,
    private readonly component = 'loopguard',
    private readonly windowMs = 10 * 60_000,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** Never throws: an Event that cannot be written must not fail a reconcile. */
  async record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const key = `${target.kind}/${target.namespace}/${target.name}/${target.uid ?? ''}/${type}/${reason}/${message}`;
    const now = Date.now();
    const previous = this.seen.get(key);
    const timestamp = new Date(now);
    try {
      if (previous && now - previous.last < this.windowMs) {
        previous.count++;
        previous.last = now;
        await this.core.patchNamespacedEvent(
          {
            name: previous.name,
            namespace: previous.namespace,
            body: { count: previous.count, lastTimestamp: timestamp.toISOString() },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return;
      }
      const involvedObject: V1ObjectReference = {
        apiVersion: target.apiVersion,
        kind: target.kind,
        namespace: target.namespace,
        name: target.name,
        uid: target.uid,
      };
      const created = await this.core.createNamespacedEvent({
        namespace: target.namespace,
        body: {
          metadata: { generateName: `${target.name}.`, namespace: target.namespace },
          involvedObject,
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: this.component },
          reportingComponent: this.component,
          firstTimestamp: timestamp,
          lastTimestamp: timestamp,
          count: 1,
        },
      });
      this.seen.set(key, { name: created.metadata?.name ?? '', namespace: target.namespace, count: 1, last: now });
      this.prune(now);
    } catch (err) {
      // The event may have expired (TTL 1 h) while we still remembered it: start a fresh one next time.
      if (err instanceof ApiException && err.code === 404) this.seen.delete(key);
      this.onError(err);
    }
  }

  private prune(now: number): void {
    if (this.seen.size < 4096) return;
    for (const [k, v] of this.seen) if (now - v.last > this.windowMs) this.seen.delete(k);
  }
}
