/** Command line: --quick, --only, --impl, --rounds, --svg, --baseline, --help. */
import { parseArgs as parseNodeArgs } from 'node:util';
import { DEFAULT_CONFIG, DEFAULT_SCENARIOS, QUICK_CONFIG, SCENARIOS, type Config, type ScenarioId } from './config';
import { buildRegistry } from './impls/registry';

export interface Args {
  cfg: Config;
  only: Set<ScenarioId>;
  /** Write docs/bench.svg (always for a full default run). */
  svg: boolean;
  /** --impl: ids or families to measure (the floor always); undefined for all. */
  implFilter: Set<string> | undefined;
  /** --baseline: a git ref to check out and measure next to the working tree. */
  baseline: string | undefined;
  help: boolean;
}

export const USAGE = [
  'usage: tsx scripts/bench/main.ts [--quick] [--only <scenario>[,...]] [--impl <implementation>[,...]] [--rounds N] [--svg] [--baseline <git-ref>]',
  `scenarios: ${SCENARIOS.map((s, i) => `${i + 1}=${s}`).join(' ')} (semaphore and multi2 only when named)`,
  '--baseline <git-ref>: also measure holdfast at that ref (a temporary git worktree), next to the working tree in every scenario',
  '  (the two swap places every other round: compare over an even number of rounds; default runs then take 4)',
].join('\n');

/** Throws an Error naming the flag on bad usage. */
export function parseArgs(argv: string[]): Args {
  const { values } = parseNodeArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean' },
      only: { type: 'string' },
      impl: { type: 'string' },
      rounds: { type: 'string' },
      svg: { type: 'boolean' },
      baseline: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const cfg = { ...(values.quick ? QUICK_CONFIG : DEFAULT_CONFIG) };
  if (values.rounds !== undefined) {
    cfg.rounds = Number(values.rounds);
    if (!Number.isInteger(cfg.rounds) || cfg.rounds < 1 || cfg.rounds > 20) throw new Error('--rounds must be 1..20');
  }
  const only = new Set<ScenarioId>();
  for (const word of values.only?.split(',') ?? []) {
    const w = word.trim().toLowerCase();
    const match = /^\d$/.test(w) ? SCENARIOS[Number(w) - 1] : SCENARIOS.find((s) => s === w || s.startsWith(w));
    if (!match) throw new Error(`--only: unknown scenario '${word}' (${SCENARIOS.join(', ')} or 1..${SCENARIOS.length})`);
    only.add(match);
  }
  if (only.size === 0) DEFAULT_SCENARIOS.forEach((s) => only.add(s));
  // --impl holdfast,redlock: measure only these (and the floor), e.g. under --cpu-prof.
  const implFilter = values.impl === undefined ? undefined : new Set(values.impl.split(',').map((w) => w.trim()));
  const known = buildRegistry();
  const all = [...known.single, ...known.quorum];
  for (const id of implFilter ?? []) {
    if (!all.some((i) => i.id === id || i.family === id)) throw new Error(`--impl: unknown implementation '${id}'`);
  }
  const baseline = values.baseline?.trim();
  if (baseline !== undefined) {
    if (baseline === '' || baseline.startsWith('-')) throw new Error('--baseline needs a git ref, e.g. --baseline HEAD~1');
    const holdfastNamed = all.some((i) => i.family.startsWith('holdfast') && (!implFilter || implFilter.has(i.id) || implFilter.has(i.family)));
    if (!holdfastNamed) throw new Error('--baseline compares holdfast versions: --impl must name a holdfast implementation');
  }
  // docs/bench.svg is the README's chart: only a full default run of the working tree alone replaces it.
  // A baseline comparison cancels the position effect over an even number of rounds
  // (see inRoundOrder): a default run with --baseline takes 4 instead of 3.
  if (baseline !== undefined && values.rounds === undefined && cfg.mode === 'default') cfg.rounds = 4;
  const full = cfg.mode === 'default' && values.only === undefined && values.rounds === undefined && values.impl === undefined && baseline === undefined;
  return { cfg, only, svg: values.svg === true || full, implFilter, baseline, help: values.help === true };
}
