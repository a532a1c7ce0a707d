/** Whether `p` settles within `ms` (the timer is cleared either way). */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([p.then(() => true, () => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return settled;
}

/**
 * `run`, its promise shared by every call until it settles; one that failed is dropped, so the next call runs it
 * again (a key read once per process, an adoption made once, each retried after a failure).
 */
export function sharedUntilFailed<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () =>
    (running ??= run().catch((err: unknown) => {
      running = undefined;
      throw err;
    }));
}

// A sliding window over async work: at most `limit` items in flight, each starting as soon as a slot frees,
// every item settled (one failure never drops the others' results).
export async function settleAll<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      try {
        results[i] = { status: 'fulfilled', value: await fn(items[i] as T, i) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
