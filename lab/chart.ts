// The latency chart (before/after) as SVG (pure), and its PNG rendering (resvg, system fonts).
import type { L7Row } from './scenarios.js';

const W = 820;
const H = 470;
const M = { left: 80, right: 30, top: 60, bottom: 95 };
const COLORS = { passthrough: '#c0392b', snat: '#27ae60' } as const;
const LABELS = { passthrough: 'before: pass-through (client IP kept)', snat: 'after: SNAT/keepalive (100.127.0.1)' } as const;
const STATS = ['p50', 'p90', 'p99', 'max'] as const;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const tick = (ms: number) => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`);

/** Grouped bars of p50/p90/p99/max per mode on a log scale, with the CLB's real-server timeout drawn across. */
export function latencySvg(rows: L7Row[], timeoutMs: number, title: string): string {
  const values = rows.flatMap((r) => STATS.map((s) => r.summary[s])).filter((v) => Number.isFinite(v) && v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values, 1))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values, timeoutMs) * 1.5)));
  const plotH = H - M.top - M.bottom;
  const plotW = W - M.left - M.right;
  const y = (ms: number) => M.top + plotH - ((Math.log10(ms) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="28" font-size="17" text-anchor="middle" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let d = lo; d <= hi; d *= 10) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(d)}" y2="${y(d)}" stroke="#ddd"/>`);
    out.push(`<text x="${M.left - 8}" y="${y(d) + 4}" font-size="12" text-anchor="end">${tick(d)}</text>`);
  }
  out.push(`<text x="18" y="${M.top + plotH / 2}" font-size="13" transform="rotate(-90 18 ${M.top + plotH / 2})" text-anchor="middle">request latency (log scale)</text>`);
  out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(timeoutMs)}" y2="${y(timeoutMs)}" stroke="#555" stroke-dasharray="6 4"/>`);
  out.push(`<text x="${M.left + 6}" y="${y(timeoutMs) + 15}" font-size="12" fill="#555">CLB real-server timeout ${fmt(timeoutMs)}</text>`);
  const groupW = plotW / STATS.length;
  const barW = Math.min(60, (groupW * 0.7) / Math.max(1, rows.length));
  STATS.forEach((stat, g) => {
    const gx = M.left + g * groupW + (groupW - barW * rows.length) / 2;
    rows.forEach((row, k) => {
      const v = row.summary[stat];
      if (!Number.isFinite(v) || v <= 0) return;
      const x = gx + k * barW;
      out.push(`<rect x="${x}" y="${y(v)}" width="${barW - 4}" height="${M.top + plotH - y(v)}" fill="${COLORS[row.mode]}"/>`);
      out.push(`<text x="${x + (barW - 4) / 2}" y="${y(v) - 5}" font-size="11" text-anchor="middle">${fmt(v)}</text>`);
    });
    out.push(`<text x="${M.left + g * groupW + groupW / 2}" y="${M.top + plotH + 20}" font-size="14" text-anchor="middle">${stat}</text>`);
  });
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${M.top + plotH}" y2="${M.top + plotH}" stroke="#333"/>`);
  rows.forEach((row, k) => {
    const lx = M.left;
    const ly = H - 48 + k * 22;
    out.push(`<rect x="${lx}" y="${ly - 11}" width="14" height="14" fill="${COLORS[row.mode]}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly + 1}" font-size="13">${esc(`${LABELS[row.mode]}: ${row.summary.ok}/${row.summary.total} ok, ${row.summary.retried} retried`)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

/** Renders the SVG with the system's fonts (DejaVu on Debian); without fonts the bars still render. */
export async function renderPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  return new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: 'white' }).render().asPng();
}
