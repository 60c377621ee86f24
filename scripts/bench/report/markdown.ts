/** The report on stdout: one table per scenario, the watchdog, the baseline comparison, the targets. */
import type { Config } from '../config';
import { POLL_MS } from '../config';
import type { ImplDef } from '../impls/types';
import type { ScenarioResult } from '../results';
import type { WatchdogRun } from '../scenarios/watchdog';
import { baselineTable } from './baseline';
import { mdTable } from './format';
import { scenarioTable, watchdogTable } from './tables';
import type { Target } from './targets';

export interface ReportInput {
  cfg: Config;
  meta: { date: string; host: { platform: string; cpus: number; cpuModel: string }; node: string; redis: string; unhandledRejections: number; baseline?: { ref: string; commit: string } };
  results: ScenarioResult[];
  /** Every implementation that may appear (to pair baseline twins). */
  impls: ImplDef[];
  watchdog: WatchdogRun[];
  targets: Target[];
  errorKinds: number;
  failure: string | undefined;
}

export function markdownReport(r: ReportInput): string {
  const { cfg, meta } = r;
  const lines: string[] = [];
  lines.push(`# holdfast benchmark (${cfg.mode})`, '');
  lines.push(`${meta.date} · ${meta.host.platform} · ${meta.host.cpus} CPUs (${meta.host.cpuModel}) · Node ${meta.node} · redis-server ${meta.redis} (127.0.0.1, started by the bench)`);
  lines.push('');
  lines.push(
    `Rounds: ${cfg.rounds}, implementations alternating within each round. × floor = median over rounds of (implementation / raw floor of the same round); ` +
      `the raw floor is holdfast's own Lua scripts (lib/store/scripts) called with ioredis evalsha (acquire then release, one connection; under contention retried every ${POLL_MS} ms). ` +
      'RT = commands sent by Node (round trips; counted on ioredis connections only, – for the node-redis rows); Redis cmds include those run inside Lua scripts. Latency percentiles pool all rounds.',
  );
  if (meta.baseline) {
    lines.push('', `Baseline: holdfast@${meta.baseline.ref} = commit ${meta.baseline.commit} (a temporary git worktree), measured in the same rounds as the working tree.`);
  }
  for (const s of r.results) {
    lines.push('', `## ${s.title}`, '');
    lines.push(`_${Object.entries(s.params).map(([k, v]) => `${k} ${v}`).join(', ')}_`, '');
    lines.push(scenarioTable(s));
    const foreign = Math.max(...s.summaries.map((x) => x.foreignCoresMax));
    const retried = s.rounds.filter((x) => x.retried).length;
    if (foreign > 0.15 || retried > 0) {
      lines.push(
        '',
        `⚠ Other processes on this machine used up to ${foreign.toFixed(2)} cores during this scenario's kept runs (/proc/stat minus our Node and Redis CPU)` +
          `${retried ? `; ${retried} disturbed run(s) were measured again and the less disturbed attempt kept` : ''}: numbers may be disturbed.`,
      );
    }
  }
  if (r.watchdog.length > 0) {
    const who = r.watchdog.length === 1 ? 'holdfast only' : r.watchdog.map((w) => w.impl).join(' vs ');
    lines.push('', `## 7. Watchdog: held locks, renewal ticks, heap (${who})`, '', watchdogTable(r.watchdog));
  }
  const comparison = meta.baseline ? baselineTable(r.results, r.impls) : undefined;
  if (comparison) lines.push('', `## Working tree vs holdfast@${meta.baseline!.ref}`, '', comparison);
  if (r.targets.length) {
    lines.push('', '## Targets (holdfast)', '');
    lines.push(mdTable(['target', 'measured', 'verdict'], r.targets.map((t) => [t.target, t.measured, t.pass === undefined ? '–' : t.pass ? 'PASS' : '**MISS**'])));
  }
  if (meta.unhandledRejections || r.errorKinds) {
    lines.push('', `Unhandled rejections (counted, not fatal; all processes): ${meta.unhandledRejections}. Error kinds in this process: ${r.errorKinds}${r.errorKinds ? ' (see bench-results/latest.json)' : ''}.`);
  }
  if (r.failure) lines.push('', `**Run failed:** ${r.failure}`);
  return `${lines.join('\n')}\n`;
}
