// API limits that shape batching (tencent-cloud.md §3): DescribeLoadBalancers takes ≤ 20 ids and pages of
// ≤ 100; DescribeTargetHealth ≤ 30 ids; DescribeListeners ≤ 100 listener ids.
export const MAX_LOAD_BALANCER_IDS = 20;
export const MAX_PAGE_SIZE = 100;
export const MAX_TARGET_HEALTH_IDS = 30;
export const MAX_LISTENER_IDS = 100;
/** LoadBalancerVips has no documented maximum; 20 keeps requests the size of id batches. */
export const MAX_VIPS = 20;

/** Splits `items` into batches of at most `size`, after dropping duplicates and empty strings. */
export function batches(items: readonly string[], size: number): string[][] {
  if (!Number.isInteger(size) || size < 1) throw new TypeError(`batch size must be an integer ≥ 1, got ${size}`);
  const unique = [...new Set(items.filter((s) => s !== ''))];
  const out: string[][] = [];
  for (let i = 0; i < unique.length; i += size) out.push(unique.slice(i, i + size));
  return out;
}

export interface Page<T> {
  items: T[];
  /** TotalCount as reported by the API. */
  total: number;
}

/**
 * Collects every page: Offset advances by what was returned until TotalCount is reached or a page is
 * empty (guards against a TotalCount that shrinks while paging). `maxPages` bounds a runaway loop.
 */
export async function paginate<T>(
  fetchPage: (offset: number, limit: number) => Promise<Page<T>>,
  limit: number = MAX_PAGE_SIZE,
  maxPages = 1_000,
): Promise<T[]> {
  const all: T[] = [];
  for (let page = 0; page < maxPages; page++) {
    const { items, total } = await fetchPage(all.length, limit);
    all.push(...items);
    if (items.length === 0 || all.length >= total) return all;
  }
  return all;
}
