// A client-node informer that keeps running: created with autoStart=false so handlers are attached first,
// restarted with capped backoff after any error (client-node 2.x stops for good on errors other than 410 /
// timeouts, @kubernetes/client-node src/cache.ts, ListWatch), and "synced" only after a LIST really succeeded.
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { ListWatch, Watch } from '@kubernetes/client-node';

export interface ResilientInformer<T extends KubernetesObject> {
  list(namespace?: string): ReadonlyArray<T>;
  get(name: string, namespace?: string): T | undefined;
  /** Resolves after the first successful LIST. */
  synced: Promise<void>;
  stop(): Promise<void>;
}

export interface InformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  /** Called for add/update/delete (and for objects removed by a re-LIST); only enqueue here. */
  onChange: (obj: T) => void;
  log: (line: string) => void;
  fieldSelector?: string;
}

export function startInformer<T extends KubernetesObject>(options: InformerOptions<T>): ResilientInformer<T> {
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const listFn = async (): Promise<KubernetesListObject<T>> => {
    const result = await options.list();
    markSynced();
    return result;
  };
  const informer = new ListWatch<T>(options.path, new Watch(options.kc), listFn, false, undefined, options.fieldSelector);
  let stopped = false;
  let delayMs = 800;
  let timer: NodeJS.Timeout | undefined;
  let healthySince = Date.now();

  informer.on('add', options.onChange);
  informer.on('update', options.onChange);
  informer.on('delete', options.onChange);
  informer.on('connect', () => {
    healthySince = Date.now();
  });
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    // Reset the backoff after two healthy minutes, like client-go's reflector.
    if (Date.now() - healthySince > 120_000) delayMs = 800;
    options.log(`watch ${options.path} failed (${(err as Error)?.message ?? String(err)}); restarting in ${delayMs} ms`);
    timer = setTimeout(() => {
      if (!stopped) void informer.start().catch(() => undefined);
    }, delayMs);
    delayMs = Math.min(delayMs * 2, 30_000);
  });
  void informer.start().catch(() => undefined);

  return {
    list: (ns) => informer.list(ns),
    get: (name, ns) => informer.get(name, ns),
    synced,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await informer.stop();
    },
  };
}
