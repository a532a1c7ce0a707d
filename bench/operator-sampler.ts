// Memory of the operator process, sampled from outside: RSS from /proc/<pid>/status (VmRSS now, VmHWM the
// kernel's own peak, so no spike between samples is missed) and the V8 heap from the operator's /metrics
// (prom-client's default process metrics, the figures a Prometheus would scrape).
import { readFileSync } from 'node:fs';

export interface MemorySample {
  at: number;
  rssBytes: number;
  /** The kernel's peak RSS of the process so far. */
  hwmBytes: number;
  heapUsedBytes?: number;
  heapTotalBytes?: number;
}

export function procStatus(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return undefined;
  }
}

/** `nodejs_heap_size_used_bytes` and `_total_bytes` from a Prometheus text page. */
export function heapFromMetrics(text: string): { used?: number; total?: number } {
  const value = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const used = value('nodejs_heap_size_used_bytes');
  const total = value('nodejs_heap_size_total_bytes');
  return { ...(used !== undefined ? { used } : {}), ...(total !== undefined ? { total } : {}) };
}

export class OperatorSampler {
  readonly samples: MemorySample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private heap: { used?: number; total?: number } = {};
  private scraping = false;
  private ticks = 0;

  /**
   * RSS every `rssMs`; the heap from a scrape every `scrapeMs`: by default the chart's ServiceMonitor interval (30 s),
   * because a scrape is work the operator does (it renders every series) and the bench measures the operator as
   * Prometheus would scrape it. Scraping every 2 s, as the bench once did, added its own garbage to the peak.
   */
  constructor(
    private readonly pid: number,
    private readonly metricsUrl: string,
    private readonly rssMs = 250,
    scrapeMs = 30_000,
  ) {
    this.heapEvery = Math.max(1, Math.round(scrapeMs / rssMs));
  }

  private readonly heapEvery: number;

  start(): this {
    this.timer = setInterval(() => this.tick(), this.rssMs);
    this.tick();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const s = procStatus(this.pid);
    if (!s) return;
    // Until the first scrape succeeds (the operator's /metrics is not up at once), every tick tries.
    if ((this.heap.used === undefined || this.ticks % this.heapEvery === 0) && !this.scraping) {
      this.scraping = true;
      void fetch(this.metricsUrl, { signal: AbortSignal.timeout(10_000) })
        .then(async (r) => (this.heap = heapFromMetrics(await r.text())))
        .catch(() => undefined)
        .finally(() => (this.scraping = false));
    }
    this.ticks++;
    this.samples.push({
      at: Date.now(),
      rssBytes: s.rss,
      hwmBytes: s.hwm,
      ...(this.heap.used !== undefined ? { heapUsedBytes: this.heap.used } : {}),
      ...(this.heap.total !== undefined ? { heapTotalBytes: this.heap.total } : {}),
    });
  }

  /** Peak RSS (the kernel's) and peak heap used, over the whole run. */
  peak(): { rssBytes: number; heapUsedBytes: number } {
    return {
      rssBytes: Math.max(0, ...this.samples.map((s) => s.hwmBytes)),
      heapUsedBytes: Math.max(0, ...this.samples.map((s) => s.heapUsedBytes ?? 0)),
    };
  }

  /** Mean RSS and heap used over the samples since `from` (the settled figures). */
  since(from: number): { rssBytes: number; heapUsedBytes: number } {
    const xs = this.samples.filter((s) => s.at >= from);
    const mean = (v: number[]) => (v.length > 0 ? v.reduce((a, b) => a + b, 0) / v.length : NaN);
    return { rssBytes: mean(xs.map((s) => s.rssBytes)), heapUsedBytes: mean(xs.flatMap((s) => (s.heapUsedBytes !== undefined ? [s.heapUsedBytes] : []))) };
  }
}

export const MiB = 1024 * 1024;
export const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
