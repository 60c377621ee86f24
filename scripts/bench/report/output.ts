/** Files a run writes: bench-results/latest.json always, docs/bench.svg when asked. */
import fs from 'node:fs';
import path from 'node:path';
import { log } from '../log';
import type { ScenarioResult } from '../results';
import { renderSvg, type SvgMeta } from './svg';

const ROOT = path.join(__dirname, '..', '..', '..');

export function writeJson(json: unknown): void {
  fs.mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench-results', 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  log('wrote bench-results/latest.json');
}

export function writeSvg(results: ScenarioResult[], meta: SvgMeta): void {
  fs.mkdirSync(path.join(ROOT, 'docs'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'docs', 'bench.svg'), renderSvg(results, meta));
  log('wrote docs/bench.svg');
}
