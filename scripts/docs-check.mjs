// npm run docs:check (a step of `npm test`): builds the API reference with the settings
// of typedoc.config.mjs into a scratch directory, warnings as errors (an undocumented
// export, a broken {@link}, a type referenced but not exported), and fails when it
// differs from the committed docs/api: change a public doc comment or signature, then
// run `npm run docs` and commit the result with it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const committed = path.join(root, 'docs', 'api');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-docs-'));
const typedoc = path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');

/** Relative path -> content of every file under dir. */
function read(dir, base = dir, files = new Map()) {
  if (!fs.existsSync(dir)) return files;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) read(p, base, files);
    else files.set(path.relative(base, p), fs.readFileSync(p, 'utf8'));
  }
  return files;
}

let status = 0;
try {
  try {
    // tsc has type-checked the sources already (`npm test` runs it first).
    execFileSync(process.execPath, [typedoc, '--out', scratch, '--skipErrorChecking', '--logLevel', 'Warn'], { cwd: root, stdio: 'inherit' });
  } catch {
    console.error('docs:check: TypeDoc reported the problems above (warnings count as errors).');
    process.exit(1);
  }
  const want = read(scratch);
  const have = read(committed);
  const stale = [...new Set([...want.keys(), ...have.keys()])].filter((f) => want.get(f) !== have.get(f)).sort();
  if (stale.length > 0) {
    console.error(`docs:check: docs/api does not match the sources (${stale.join(', ')}): run \`npm run docs\` and commit docs/api.`);
    status = 1;
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
process.exit(status);
