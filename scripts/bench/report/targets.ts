/** The targets holdfast (the working tree) is held to (issue 14); a baseline version is compared, not judged. */
import type { ScenarioResult, Summary, WatchdogResult } from '../results';
import { f, fi, fx } from './format';

export interface Target {
  target: string;
  measured: string;
  pass: boolean | undefined;
}

/** Other libraries: neither the floor nor any holdfast version. */
function isPeer(x: Summary): boolean {
  return x.family !== 'raw' && x.family !== 'contract-floor' && !x.family.startsWith('holdfast');
}

/** The best peer by ratio to the floor (same run). */
function bestPeer(s: ScenarioResult): Summary | undefined {
  const peers = s.summaries.filter(isPeer);
  return peers.length === 0 ? undefined : peers.reduce((a, b) => (b.ratio > a.ratio ? b : a));
}

/** Issue 14's targets; a baseline version is compared in its own table, not judged. */
export function evaluateTargets(results: Map<string, ScenarioResult>, wd: WatchdogResult | undefined): Target[] {
  const out: Target[] = [];
  const hf = (s: ScenarioResult | undefined) => s?.summaries.find((x) => x.family === 'holdfast');
  for (const id of ['uncontended', 'parallel64', 'quorum']) {
    const s = results.get(id);
    const h = hf(s);
    const best = s && bestPeer(s);
    if (!h || !best) continue;
    out.push({ target: `${id}: holdfast ratio ≥ best peer's`, measured: `${fx(h.ratio)} vs ${best.impl} ${fx(best.ratio)}`, pass: h.ratio >= best.ratio });
  }
  // The contended targets, for the lock (getLock) and, told apart, the fair lock: a user
  // who needs every wait short under contention picks the latter.
  for (const id of ['clients16', 'procs4-0ms']) {
    const s = results.get(id);
    if (!s) continue;
    const best = bestPeer(s);
    for (const [family, tag] of [['holdfast', id], ['holdfast-fair', `${id} (fair lock)`]]) {
      const h = s.summaries.find((x) => x.family === family);
      if (!h) continue;
      if (best) out.push({ target: `${tag}: throughput ≥ 0.9× best peer's`, measured: `${fx(h.ratio)} vs ${best.impl} ${fx(best.ratio)} (${f(h.ratio / best.ratio)})`, pass: h.ratio >= 0.9 * best.ratio });
      out.push({ target: `${tag}: every worker's share within 2× of every other's`, measured: `worst round ${fi(h.perWorkerMin ?? NaN)}–${fi(h.perWorkerMax ?? NaN)} (${f(h.worstSpread ?? NaN)})`, pass: (h.perWorkerMin ?? 0) > 0 && (h.worstSpread ?? Infinity) <= 2 });
      out.push({ target: `${tag}: no wait over 100 ms`, measured: `max ${f(h.max, 1)} ms`, pass: h.max <= 100 });
      out.push({ target: `${tag}: p99 wait ≤ 6 ms`, measured: `${f(h.p99)} ms (${f(h.cmdsPerOp, 1)} Redis cmds/section)`, pass: h.p99 <= 6 });
    }
  }
  // Leads to keep (issue 14's table): ahead of every peer.
  for (const id of ['workers16', 'procs4-2ms']) {
    const s = results.get(id);
    const h = hf(s);
    const best = s && bestPeer(s);
    if (!h || !best) continue;
    out.push({ target: `${id}: lead kept (ratio ≥ best peer's)`, measured: `${fx(h.ratio)}, p99 ${f(h.p99)} ms, max/min ${f(h.worstSpread ?? NaN)} vs ${best.impl} ${fx(best.ratio)}, p99 ${f(best.p99)} ms`, pass: h.ratio >= best.ratio });
  }
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
