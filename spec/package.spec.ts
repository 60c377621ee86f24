import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// What users install: build, `npm pack`, unpack into a scratch node_modules, and load
// it with a plain require() and an ESM import, types included.

const root = path.resolve(__dirname, '..');
let scratch: string;
let files: string[];

beforeAll(() => {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'pipe' });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-pack-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }).toString());
  files = packed[0].files.map((f: { path: string }) => f.path);
  const modules = path.join(scratch, 'node_modules');
  fs.mkdirSync(path.join(modules, 'holdfast'), { recursive: true });
  execFileSync('tar', ['xzf', path.join(scratch, packed[0].filename), '-C', path.join(modules, 'holdfast'), '--strip-components=1']);
  // Its dependency and peer come from this checkout, as npm would install them.
  for (const dep of ['eventemitter3', 'ioredis']) fs.symlinkSync(path.join(root, 'node_modules', dep), path.join(modules, dep));
}, 120_000);
afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

it('ships only what users need, with no install-time scripts', () => {
  for (const f of files) expect(f).toMatch(/^(dist\/(cjs|esm)\/.*\.(js|d\.ts|json)$|README\.md$|LICENSE$|package\.json$)/);
  expect(files).toEqual(expect.arrayContaining(['dist/cjs/index.js', 'dist/esm/index.js', 'dist/cjs/index.d.ts', 'dist/esm/index.d.ts', 'dist/cjs/cli/index.js', 'README.md', 'LICENSE']));
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts?.[hook]).toBeUndefined();
  expect(pkg.engines.node).toBeDefined();
});

it('loads with require() from CommonJS', () => {
  const out = execFileSync(process.execPath, ['-e', "const h = require('holdfast'); console.log(typeof h.LockClient, typeof h.LockLostError, new h.QuorumError('x', 'acquire', 2, []) instanceof h.LockError)"], { cwd: scratch }).toString();
  expect(out.trim()).toBe('function function true');
});

it('runs the bin', () => {
  const out = execFileSync(process.execPath, [path.join(scratch, 'node_modules', 'holdfast', 'dist', 'cjs', 'cli', 'index.js'), '--version'], { cwd: scratch }).toString();
  expect(out.trim()).toBe(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);
});

it('loads with import from ESM', () => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', "import { LockClient, LockNotHeldError } from 'holdfast'; console.log(typeof LockClient, typeof LockNotHeldError)"], { cwd: scratch }).toString();
  expect(out.trim()).toBe('function function');
});

it('type-checks a consumer under node16 module resolution, for import and require', () => {
  fs.writeFileSync(path.join(scratch, 'use.mts'), "import { LockClient, type LostEvent } from 'holdfast';\nexport const f = (c: LockClient) => c.on('lost', (e: LostEvent) => e.reason);\n");
  fs.writeFileSync(path.join(scratch, 'use.cts'), "import holdfast = require('holdfast');\nexport const g = (c: holdfast.LockClient) => c.getLock('a').tryLock(1, 100);\n");
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), 'use.mts', 'use.cts'], { cwd: scratch, stdio: 'pipe' });
});
