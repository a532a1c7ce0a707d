// core/v1 Events on Services and Ingresses, as TKE's controllers write them (`kubectl describe` shows them).
// Repeats of the same reason+message on the same object bump `count` instead of creating a new Event, like
// client-go's recorder, so a failing resync every 30 s does not flood the namespace.
import type { CoreV1Api, CoreV1Event, V1ObjectMeta } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

export interface EventTarget {
  kind: 'Service' | 'Ingress';
  apiVersion: string;
  metadata?: V1ObjectMeta;
}

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  private readonly seen = new Map<string, { name: string; count: number }>();
  private readonly instance: string;

  constructor(
    private readonly core: CoreV1Api,
    private readonly log: (line: string) => void,
    instance = 'tke-simulator',
  ) {
    this.instance = instance;
  }

  async record(target: EventTarget, component: string, type: EventType, reason: string, message: string): Promise<void> {
    const ns = target.metadata?.namespace;
    const name = target.metadata?.name;
    if (!ns || !name) return;
    const key = `${target.metadata?.uid ?? `${ns}/${name}`}\u0000${type}\u0000${reason}\u0000${message}`;
    const now = new Date();
    try {
      const prior = this.seen.get(key);
      if (prior) {
        prior.count++;
        await this.core.patchNamespacedEvent(
          { namespace: ns, name: prior.name, body: { count: prior.count, lastTimestamp: now } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return;
      }
      const event: CoreV1Event = {
        metadata: { name: `${name}.${(now.getTime() * 1_000_000 + Math.floor(Math.random() * 1_000_000)).toString(16)}`, namespace: ns },
        involvedObject: {
          kind: target.kind,
          apiVersion: target.apiVersion,
          name,
          namespace: ns,
          ...(target.metadata?.uid ? { uid: target.metadata.uid } : {}),
          ...(target.metadata?.resourceVersion ? { resourceVersion: target.metadata.resourceVersion } : {}),
        },
        type,
        reason,
        message: message.slice(0, 1024),
        source: { component },
        reportingComponent: component,
        reportingInstance: this.instance,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      };
      const created = await this.core.createNamespacedEvent({ namespace: ns, body: event });
      // Bounded memory for long dev sessions: forgetting only costs a new Event instead of a count bump.
      if (this.seen.size >= 1000) this.seen.clear();
      this.seen.set(key, { name: created.metadata?.name ?? '', count: 1 });
    } catch (err) {
      // An Event is a courtesy; losing one (e.g. the namespace is terminating) must not fail a reconcile.
      this.seen.delete(key);
      this.log(`event ${type}/${reason} on ${target.kind} ${ns}/${name} not written: ${(err as Error).message}`);
    }
  }
}
