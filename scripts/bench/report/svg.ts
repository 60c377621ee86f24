/** The chart in docs/bench.svg (hand-written SVG): ratios to the floor, and p99 latencies. */
import { BASELINE_FAMILIES, FAMILIES, type Family } from '../impls/types';
import type { ScenarioResult } from '../results';
import { f, fi, fx } from './format';

const COLORS: Record<Family, string> = {
  raw: '#6b7280',
  'contract-floor': '#9ca3af',
  holdfast: '#2563eb',
  'holdfast-node-redis': '#0891b2',
  'holdfast-fair': '#7c3aed',
  redlock: '#dc2626',
  'redis-semaphore': '#16a34a',
  'node-redisson': '#d97706',
  'holdfast-baseline': '#93c5fd',
  'holdfast-fair-baseline': '#c4b5fd',
};

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface SvgMeta {
  summary: string;
  footnote: string;
  /** Legend name of the baseline families (e.g. holdfast@main); undefined without --baseline. */
  baselineRef?: string;
}

export function renderSvg(results: ScenarioResult[], meta: SvgMeta): string {
  // A run without --baseline always shows the same six series (bars keep their places).
  const families = meta.baselineRef === undefined ? FAMILIES : [...FAMILIES, ...BASELINE_FAMILIES];
  const legendName = (fam: Family) =>
    fam === 'raw' ? 'raw floor' : fam === 'holdfast-baseline' ? `holdfast@${meta.baselineRef}` : fam === 'holdfast-fair-baseline' ? `fair@${meta.baselineRef}` : fam;
  const W = 1040;
  const ml = 64;
  const mr = 16;
  const ph = 210;
  const top1 = 96;
  const top2 = top1 + ph + 92;
  const H = top2 + ph + 70;
  const groups = results;
  const gw = (W - ml - mr) / Math.max(1, groups.length);
  const bw = Math.min(24, (gw - 24) / families.length);
  const legendStep = Math.min(135, (W - ml - mr) / families.length);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${ml}" y="26" font-size="17" font-weight="bold">holdfast benchmark</text>`);
  out.push(`<text x="${ml}" y="44" font-size="11" fill="#444">${esc(meta.summary)}</text>`);
  families.forEach((fam, i) => {
    const x = ml + i * legendStep;
    out.push(`<rect x="${x}" y="56" width="12" height="12" fill="${COLORS[fam]}"/>`);
    out.push(`<text x="${x + 17}" y="66" font-size="12">${esc(legendName(fam))}</text>`);
  });
  const barX = (g: number, fam: Family) => ml + g * gw + (gw - bw * families.length) / 2 + families.indexOf(fam) * bw;
  const groupLabels = (y: number) =>
    groups.forEach((s, g) => {
      const label = s.id === 'quorum' ? 'quorum (× raw quorum)' : s.id;
      out.push(`<text x="${ml + g * gw + gw / 2}" y="${y}" font-size="12" text-anchor="middle">${esc(label)}</text>`);
    });

  // Panel 1: ops/s ratio to the floor, linear.
  const ratios = groups.flatMap((s) => s.summaries.map((x) => x.ratio)).filter(Number.isFinite);
  const rmax = Math.max(1.2, Math.ceil(Math.max(...ratios, 1) * 5) / 5);
  const y1 = (v: number) => top1 + ph - (Math.max(0, v) / rmax) * ph;
  out.push(`<text x="${ml}" y="${top1 - 10}" font-size="13" font-weight="bold">Throughput, × raw floor of the same scenario (higher is better)</text>`);
  for (let t = 0; t <= rmax + 1e-9; t += rmax > 3 ? 1 : 0.2) {
    out.push(`<line x1="${ml}" x2="${W - mr}" y1="${y1(t)}" y2="${y1(t)}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${ml - 6}" y="${y1(t) + 4}" font-size="10" text-anchor="end">${t.toFixed(1)}</text>`);
  }
  out.push(`<line x1="${ml}" x2="${W - mr}" y1="${y1(1)}" y2="${y1(1)}" stroke="#111" stroke-dasharray="4 3"/>`);
  groups.forEach((s, g) => {
    for (const x of s.summaries) {
      if (!Number.isFinite(x.ratio) || !families.includes(x.family)) continue;
      const bx = barX(g, x.family);
      out.push(`<rect x="${bx.toFixed(1)}" y="${y1(x.ratio).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(top1 + ph - y1(x.ratio)).toFixed(1)}" fill="${COLORS[x.family]}"><title>${esc(`${s.id} ${x.label}: ${fi(x.opsPerSec)} ops/s, ${fx(x.ratio)}`)}</title></rect>`);
      out.push(`<text x="${(bx + (bw - 2) / 2).toFixed(1)}" y="${(y1(x.ratio) - 3).toFixed(1)}" font-size="8.5" text-anchor="middle">${x.ratio.toFixed(2)}</text>`);
    }
  });
  groupLabels(top1 + ph + 16);

  // Panel 2: p99 wait (contended) or p99 lock+unlock latency (uncontended), log scale.
  const p99s = groups.flatMap((s) => s.summaries.map((x) => x.p99)).filter((v) => Number.isFinite(v) && v > 0);
  const lmin = -2;
  const lmax = Math.max(1, Math.ceil(Math.log10(Math.max(...p99s, 1))));
  const y2 = (v: number) => top2 + ph - ((Math.log10(Math.max(v, 10 ** lmin)) - lmin) / (lmax - lmin)) * ph;
  out.push(`<text x="${ml}" y="${top2 - 10}" font-size="13" font-weight="bold">p99 wait (contended) / p99 lock+unlock latency (uncontended), ms, log scale (lower is better)</text>`);
  for (let e = lmin; e <= lmax; e++) {
    out.push(`<line x1="${ml}" x2="${W - mr}" y1="${y2(10 ** e)}" y2="${y2(10 ** e)}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${ml - 6}" y="${y2(10 ** e) + 4}" font-size="10" text-anchor="end">${10 ** e >= 1 ? 10 ** e : (10 ** e).toFixed(-e)}</text>`);
  }
  groups.forEach((s, g) => {
    for (const x of s.summaries) {
      if (!Number.isFinite(x.p99) || x.p99 <= 0 || !families.includes(x.family)) continue;
      const bx = barX(g, x.family);
      out.push(`<rect x="${bx.toFixed(1)}" y="${y2(x.p99).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(top2 + ph - y2(x.p99)).toFixed(1)}" fill="${COLORS[x.family]}"><title>${esc(`${s.id} ${x.label}: p99 ${f(x.p99, 3)} ms`)}</title></rect>`);
      const label = x.p99 >= 100 ? x.p99.toFixed(0) : x.p99 >= 10 ? x.p99.toFixed(1) : x.p99.toFixed(2);
      out.push(`<text x="${(bx + (bw - 2) / 2).toFixed(1)}" y="${(y2(x.p99) - 3).toFixed(1)}" font-size="8.5" text-anchor="middle">${label}</text>`);
    }
  });
  groupLabels(top2 + ph + 16);
  out.push(`<text x="${ml}" y="${H - 14}" font-size="10" fill="#555">${esc(meta.footnote)}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
