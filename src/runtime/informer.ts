// client-node's informer stops for good on any error but 410 (@kubernetes/client-node src/cache.ts, ListWatch), and
// `await start()` resolves even when the first LIST failed. This wrapper restarts it with capped, jittered
// backoff (client-go's reflector: 800 ms → 30 s) and reports "synced" only after a LIST really succeeded.
import { ListWatch, Watch, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { jitteredDelay } from './backoff.js';
import { FIELD_MANAGER } from '../api/loopbackpolicy.js';
import { kubeStatus } from './kube-errors.js';
import { definedOf } from './target-trim.js';
import type { LogSink } from './logger.js';

export type InformerEvent = 'add' | 'update' | 'delete';

export interface ResilientInformerOptions<T extends KubernetesObject> {
  name: string;
  /** Watch path, e.g. `/api/v1/services` or `/apis/loopguard.dev/v1alpha1/loopbackpolicies`. */
  path: string;
  /** One LIST request; `page` asks for a page of a paged LIST (listInPages). A function that ignores it lists whole. */
  list: (page: ListPage) => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  /** e.g. `metadata.name=kube-proxy`: lets RBAC restrict list/watch to one object by resourceNames. */
  fieldSelector?: string;
  onEvent: (type: InformerEvent, obj: T) => void;
  /** Trims each object in place before it is cached, after `slim` (e.g. target-trim.ts: only what the readers read). */
  transform?: (obj: T) => T;
  /**
   * Keep loopguard's own managedFields entry (small: the annotations it wrote) when `slim` drops the rest: set for
   * the targets' caches only, where it is the evidence of a lost record (model/lost-record.ts). Every other cache
   * drops managedFields whole: on a LoopbackRecord loopguard's entry names every field of its spec (it is the record's
   * only writer), and nothing reads it.
   */
  keepOwnManagedFields?: boolean;
  logger?: Pick<LogSink, 'info' | 'warn'>;
  /** For tests: how long to wait before restart attempt n. */
  restartDelay?: (attempt: number) => number;
}

/**
 * Drops managedFields (a third of a Service as sent) before an object is cached, like controller-runtime's
 * TransformStripManagedFields. The cache keeps this very object (client-node stores what it hands to the handlers), so
 * trimming it here trims the cache; loopguard's writes read their target from the apiserver. Rebuilt, not edited
 * (target-trim.ts definedOf).
 */
export function slim<T extends KubernetesObject>(obj: T, keepOwn: boolean): T {
  const md = obj.metadata;
  if (!md) return obj;
  const own = keepOwn ? md.managedFields?.filter((e) => e.manager === FIELD_MANAGER) : undefined;
  obj.metadata = definedOf(md, own && own.length > 0 ? { managedFields: own } : {}, ['managedFields']);
  return obj;
}

/** A page of a LIST (the API's `limit` and `continue`). */
export interface ListPage {
  limit?: number;
  _continue?: string;
}

/** Objects per LIST page: client-go's reflector and pager page by 500 too. */
export const LIST_PAGE_SIZE = 500;

type ListMeta = NonNullable<KubernetesListObject<KubernetesObject>['metadata']> & { continue?: string };

/**
 * The next page's token: `_continue` in a typed list (client-node deserializes it), `continue` in a custom resource's
 * list (the apiserver's JSON as it came). Reading only the first lost every page after the first of the records.
 */
function continueToken(page: KubernetesListObject<KubernetesObject>): string | undefined {
  const meta = page.metadata as ListMeta | undefined;
  return meta?._continue ?? meta?.continue;
}

/**
 * A LIST in pages, each page's objects trimmed (`keep`) before the next page is asked for, as client-go's pager reads
 * a LIST: asked whole, every Service of the cluster was parsed and deserialized untrimmed in one piece, the start-up
 * peak of the operator's RSS (issue 40). A continue token that expired mid-way (410) restarts as one whole LIST, as
 * client-go's pager falls back to a full list.
 */
export async function listInPages<T extends KubernetesObject>(
  list: (page: ListPage) => Promise<KubernetesListObject<T>>,
  keep: (obj: T) => T,
  pageSize = LIST_PAGE_SIZE,
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let page = await list({ limit: pageSize });
  for (;;) {
    for (const item of page.items) items.push(keep(item));
    const next = continueToken(page);
    if (!next) break;
    try {
      page = await list({ limit: pageSize, _continue: next });
    } catch (err) {
      if (kubeStatus(err) !== 410) throw err;
      const whole = await list({});
      return { ...whole, items: whole.items.map(keep) };
    }
  }
  // Every page carries the snapshot's resourceVersion, the one the watch resumes from.
  const { _continue: _, continue: __, ...metadata } = (page.metadata ?? {}) as ListMeta;
  return { ...page, metadata, items };
}

/** A Watch that hands every failure to `done`: ListWatch's re-watch after a quiet watch ends runs unawaited and
 * authenticates outside any try, so a failing credential plugin there was an unhandled rejection, which ends Node. */
export class ReportingWatch extends Watch {
  override watch(...args: Parameters<Watch['watch']>): Promise<AbortController> {
    return super.watch(...args).catch((err: unknown) => {
      // As a plain error: one shaped like a 410 or a timeout would make ListWatch watch again at once, without backoff.
      args[3](new Error(`watch not started: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      return new AbortController();
    });
  }
}

export class ResilientInformer<T extends KubernetesObject> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  /** A LIST has succeeded (readiness); like `restarts` and `notServed`, for readers only. */
  hasSynced = false;
  private stopped = false;
  private attempt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private resolveSynced!: () => void;
  /** Resolves once a LIST has succeeded. */
  private readonly firstList = new Promise<void>((resolve) => (this.resolveSynced = resolve));
  /** How many times the informer was restarted after an error (for health and tests). */
  restarts = 0;
  /**
   * Set while the last LIST answered 404: the apiserver does not serve the resource, e.g. its CRD was deleted (a
   * GitOps prune) or never installed. The cache still holds what it last saw, so readiness must not trust it.
   */
  notServed: string | undefined;
  /** `notServed` has been logged since the resource was last served. */
  private saidNotServed = false;

  constructor(kc: KubeConfig, private readonly options: ResilientInformerOptions<T>) {
    // autoStart=false: the default would start inside the constructor, before our error handler is attached.
    this.informer = new ListWatch<T>(options.path, new ReportingWatch(kc), () => this.listed(), false, options.labelSelector, options.fieldSelector);
    for (const type of ['add', 'update', 'delete'] as const) {
      this.informer.on(type, (obj: T) => {
        this.attempt = 0;
        options.onEvent(type, this.trim(obj));
      });
    }
    this.informer.on('error', (err: unknown) => this.scheduleRestart(err));
  }

  private trim(obj: T): T {
    slim(obj, this.options.keepOwnManagedFields === true);
    return this.options.transform ? this.options.transform(obj) : obj;
  }

  /** The LIST, for the ListWatch and for the probe a restart after a 404 makes; clears `notServed` (scheduleRestart sets it). */
  private async listed(): Promise<KubernetesListObject<T>> {
    const result = await listInPages(this.options.list, (obj) => this.trim(obj));
    this.notServed = undefined;
    this.saidNotServed = false;
    this.attempt = 0;
    this.hasSynced = true;
    this.resolveSynced();
    return result;
  }

  get name(): string {
    return this.options.name;
  }

  /** Starts the informer and resolves once its first LIST has succeeded (retrying until then). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.informer.start().catch((err: unknown) => this.scheduleRestart(err));
    await this.firstList;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    await this.informer.stop();
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  /** Every failure comes here: the ListWatch's errors (its LIST's and its watch's) and the restart's own LIST. */
  private scheduleRestart(err: unknown): void {
    // client-node's watch rejects with an Error carrying statusCode; its list with an ApiException.
    if ((kubeStatus(err) ?? (err as { statusCode?: unknown } | undefined)?.statusCode) === 404) this.notServed = `the API server does not serve ${this.options.path} (HTTP 404)`;
    if (this.stopped || this.restartTimer) return;
    const delay = this.options.restartDelay?.(this.attempt) ?? jitteredDelay(this.attempt, 800, 30_000);
    this.attempt++;
    // A resource the apiserver does not serve (an optional API not installed: Gateway API, Envoy Gateway) is said once,
    // not at every retry for as long as it stays so; it is checked again on the same backoff.
    const unserved = this.notServed !== undefined;
    if (!unserved || !this.saidNotServed) {
      const fields = { informer: this.options.name, error: err instanceof Error ? err.message : String(err), retryInMs: delay };
      if (unserved) this.options.logger?.info('Resource not served; checking again until it is', fields);
      else this.options.logger?.warn('Informer failed, restarting', fields);
    }
    this.saidNotServed = unserved;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopped) return;
      this.restarts++;
      // After a 404 the ListWatch would only watch again from its resourceVersion, and a watch that succeeds says
      // nothing: a LIST first tells when the resource is served again (its CRD re-created).
      const served = this.notServed === undefined ? Promise.resolve() : this.listed().then(() => undefined);
      served.then(() => this.informer.start()).catch((e: unknown) => this.scheduleRestart(e));
    }, delay);
    this.restartTimer.unref();
  }
}
