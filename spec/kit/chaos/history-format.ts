/** The history checker's report (history.ts) as text. */
import type { Fault } from './faults';
import type { Report } from './history';

/** Cluster mode: which node each restart hit, and the locks it lost (a restart elsewhere excuses nothing for them). */
function clusterRestarts(faults: readonly Fault[]): string[] {
  const restarts = faults.filter((f) => f.kind === 'restart' && f.locks !== undefined);
  if (restarts.length === 0) return [];
  const byNode = new Map<string, number>();
  for (const f of restarts) {
    const what = `node ${f.master ?? '?'} (${f.locks!.length > 0 ? f.locks!.join(', ') : 'no lock'})`;
    byNode.set(what, (byNode.get(what) ?? 0) + 1);
  }
  return [`  restarts: ${[...byNode].sort().map(([what, n]) => `${what} ${n}`).join(', ')}`];
}

/** Cluster with replicas: how each failover went (a killed master may lose what it had not replicated; a planned one loses nothing). */
function clusterFailovers(faults: readonly Fault[]): string[] {
  const failovers = faults.filter((f) => f.kind === 'failover' && f.how !== undefined);
  if (failovers.length === 0) return [];
  const n = (how: Fault['how']) => failovers.filter((f) => f.how === how).length;
  return [`  failovers: master killed ${n('killed')}, CLUSTER FAILOVER FORCE ${n('forced')}, CLUSTER FAILOVER ${n('manual')}`];
}

export function formatReport(r: Report, faults: readonly Fault[]): string {
  const byKind: Record<string, number> = {};
  for (const f of faults) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
  const lines = [
    `critical sections checked: ${r.sectionsChecked} (${Object.entries(r.byLock).map(([k, v]) => `${k}: ${v}`).join(', ')})${r.multiSections ? `, ${r.multiSections} of them a multi-lock's (one per name)` : ''}`,
    `outcomes: ${Object.entries(r.outcomes).map(([k, v]) => `${k} ${v}`).join(', ')}; cut by kill: ${r.killedHolds}`,
    `faults injected: ${Object.entries(byKind).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    ...clusterRestarts(faults),
    ...clusterFailovers(faults),
    `overlaps after a reported loss: ${r.overlapsAfterLoss}; excused by empty restart: ${r.excused.dataLoss}, by failover: ${r.excused.failover}, by pause: ${r.excused.pause}, by a starved holder: ${r.excused.starved}${r.excused.starved ? ` (its process ran nothing for up to ${r.longestStarvedMs} ms)` : ''}`,
    `fence counter resets by empty restart (or a killed master's failover): ${r.tokenResets}; paused holders that ended before learning of the loss: ${r.pausedEndedBeforeLoss}; sections dated back to their process's pause: ${r.startsMovedToPause}`,
    `fenced writes: ${r.writes.total}, accepted ${r.writes.accepted}, late writes rejected ${r.writes.rejectedLate}, late accepted after data loss ${r.writes.acceptedLateAfterDataLoss}, rejected after a fence reset ${r.writes.rejectedSpurious}`,
    `lost holds: ${r.lostHolds} (explained by a fault ${r.detection.explained}, unexplained ${r.detection.unexplained}); longest detection delay: ${r.detection.maxDelayMs} ms${r.detection.maxDelayFault ? ` (${r.detection.maxDelayFault}, ${r.detection.maxDelayHold})` : ''}`,
    `  by fault: ${Object.entries(r.detection.byKind).map(([k, v]) => `${k} ${v} ms`).join(', ') || 'none'}; after SIGCONT of a paused holder: ${r.detection.maxAfterResumeMs} ms`,
    `violations: ${r.violations.length}`,
    ...r.violations.slice(0, 30).map((v) => `  - [${v.kind}]${v.lock ? ` ${v.lock}:` : ''} ${v.message}`),
  ];
  if (r.violations.length > 30) lines.push(`  ... and ${r.violations.length - 30} more`);
  return lines.join('\n');
}
