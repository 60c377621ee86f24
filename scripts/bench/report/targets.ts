/** The targets holdfast (the working tree) is held to; a baseline version is compared, not judged. */
import type { ScenarioResult, Summary, WatchdogResult } from '../results';
import { f, fi, fx } from './format';

export interface Target {
  target: string;
  measured: string;
  pass: boolean | undefined;
}

/** Other libraries: neither the floor nor any holdfast version. */
function isPeer(x: Summary): boolean {
  return x.family !== 'raw' && !x.family.startsWith('holdfast');
}

export function evaluateTargets(results: Map<string, ScenarioResult>, wd: WatchdogResult | undefined): Target[] {
  const out: Target[] = [];
  const hf = (s: ScenarioResult | undefined) => s?.summaries.find((x) => x.family === 'holdfast');
  for (const id of ['uncontended', 'parallel64']) {
    const s = results.get(id);
    const h = hf(s);
    if (!s || !h) continue;
    out.push({ target: `${id}: holdfast ≥ 0.95× floor`, measured: fx(h.ratio), pass: h.ratio >= 0.95 });
    const peers = s.summaries.filter(isPeer);
    if (peers.length === 0) continue;
    const best = peers.reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a));
    out.push({ target: `${id}: holdfast ahead of every peer (ops/s)`, measured: `${fi(h.opsPerSec)} vs best peer ${best.impl} ${fi(best.opsPerSec)}`, pass: h.opsPerSec > best.opsPerSec });
  }
  const w16 = hf(results.get('workers16'));
  if (w16) {
    out.push({ target: 'workers16: p99 wait ≤ 5 ms', measured: `${f(w16.p99)} ms`, pass: w16.p99 <= 5 });
    out.push({ target: 'workers16: max/min CS per worker ≤ 2', measured: f(w16.worstSpread ?? NaN), pass: (w16.worstSpread ?? Infinity) <= 2 });
  }
  const p2 = hf(results.get('procs4-2ms'));
  if (p2) out.push({ target: 'procs4, 2 ms think: p99 wait ≤ 4 ms', measured: `${f(p2.p99)} ms`, pass: p2.p99 <= 4 });
  const p0 = hf(results.get('procs4-0ms'));
  if (p0) {
    out.push({
      target: 'procs4, 0 ms think: no starvation (every process served, max/min ≤ 2)',
      measured: `per process ${fi(p0.perWorkerMin ?? NaN)}–${fi(p0.perWorkerMax ?? NaN)}, worst max/min ${f(p0.worstSpread ?? NaN)}`,
      pass: (p0.perWorkerMin ?? 0) > 0 && (p0.worstSpread ?? Infinity) <= 2,
    });
  }
  const q = hf(results.get('quorum'));
  if (q) out.push({ target: 'quorum: holdfast ≥ 0.97× raw parallel quorum', measured: fx(q.ratio), pass: q.ratio >= 0.97 });
  if (wd) {
    out.push({ target: 'watchdog: ≤ 1 round trip per 100 held locks per tick', measured: `${f(wd.rtPer100Renewals, 3)} per 100 renewals (${f(wd.rtPerTick, 1)} RT/tick)`, pass: wd.rtPer100Renewals <= 1 });
    out.push({
      target: 'watchdog: heap ≤ 1 KB per held lock (its Lock handle included)',
      measured: `${(wd.heapPerHeldLockBytes / 1024).toFixed(2)} KB (handle ${(wd.heapPerHandleBytes / 1024).toFixed(2)} KB + hold state ${((wd.heapPerHeldLockBytes - wd.heapPerHandleBytes) / 1024).toFixed(2)} KB)`,
      pass: wd.heapPerHeldLockBytes <= 1024,
    });
    out.push({
      target: 'heap: no growth over the lock/unlock cycles (≤ 256 KB after warm-up)',
      measured: `${(wd.heapGrowthBytes / 1024).toFixed(1)} KB over ${wd.cycles.toLocaleString('en-US')} cycles`,
      pass: wd.heapGrowthBytes <= 256 * 1024,
    });
  }
  return out;
}
