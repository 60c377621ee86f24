/** Number formats and markdown tables shared by the report modules. */

export const f = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : x === Infinity ? '∞' : '–');
export const fi = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
export const fx = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '–');

/** First column left-aligned, the rest right-aligned. */
export function mdTable(headers: string[], rows: string[][]): string {
  const align = headers.map((_, i) => (i === 0 ? ':--' : '--:'));
  return [headers, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}
