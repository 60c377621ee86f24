/**
 * The fenced register's history (register.ts): what fencing stopped, measured, and
 * whether it let anything through. Pure, over the holds (records.ts) as the history
 * checker dates them (grantedBeforePause), per lock name, exclusive holds only (readers
 * and semaphore holders write nothing).
 *
 *  - A write refused while a later holder of the name (one whose section began after
 *    this one's) had begun before its reply: a late write fenced off (counted).
 *  - A write refused with no such later holder: the register refused a holder that
 *    nobody had followed, so an earlier holder carried a higher token: a violation.
 *  - A write accepted although it was sent after the register had acknowledged a later
 *    holder's write: the register's order of writes put a stale holder after its
 *    successor, which fencing exists to prevent (the tokens went backwards): a violation.
 */
import type { Hold, Violation } from './records';

export interface RegisterReport {
  writes: number;
  accepted: number;
  /** Writes of a holder whose successor had begun, refused by the register. */
  fencedOffLate: number;
  /** Writes of a holder whose successor had begun but not yet written: accepted, before the successor's first (the register's order is still a serial one). */
  acceptedBeforeSuccessorWrote: number;
  violations: Violation[];
}

export function checkRegister(holds: readonly Hold[]): RegisterReport {
  const report: RegisterReport = { writes: 0, accepted: 0, fencedOffLate: 0, acceptedBeforeSuccessorWrote: 0, violations: [] };
  const byLock = new Map<string, Hold[]>();
  for (const h of holds) {
    if (h.side === 'read' || h.permits !== undefined || !h.registerWrites?.length) continue;
    byLock.set(h.lock, [...(byLock.get(h.lock) ?? []), h]);
  }
  for (const [lock, list] of byLock) {
    for (const a of list) {
      const successors = list.filter((b) => b !== a && b.start > a.start);
      for (const w of a.registerWrites!) {
        report.writes++;
        if (w.ok) report.accepted++;
        const begun = successors.filter((b) => b.start <= w.at);
        if (!w.ok) {
          if (begun.length > 0) report.fencedOffLate++;
          else report.violations.push({ kind: 'register', lock, message: `the register refused ${a.id} (token ${a.token}) at ${w.sent}, and no later holder had begun: an earlier holder carried a higher token` });
          continue;
        }
        const overtaken = begun.find((b) => b.registerWrites?.some((x) => x.ok && x.at < w.sent));
        if (overtaken) {
          report.violations.push({ kind: 'register', lock, message: `the register accepted ${a.id}'s write (token ${a.token}) sent at ${w.sent}, after it had accepted one of ${overtaken.id} (token ${overtaken.token}), whose section began later, at ${overtaken.start}` });
        } else if (begun.length > 0) report.acceptedBeforeSuccessorWrote++;
      }
    }
  }
  return report;
}

export function formatRegisterReport(r: RegisterReport): string {
  return `fenced register: ${r.writes} writes, ${r.accepted} accepted; late writes fenced off ${r.fencedOffLate}, accepted before the successor's first write ${r.acceptedBeforeSuccessorWrote}; violations: ${r.violations.length}`;
}
