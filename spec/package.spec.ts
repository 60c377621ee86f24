import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { REPORT_TO } from '../lib/cli/exit-codes';
import { startServer } from './kit/servers';

// What users install: build, `npm pack`, unpack into a scratch node_modules, and load
// it with a plain require() and an ESM import, types included.

const root = path.resolve(__dirname, '..');
let scratch: string;
let files: string[];
/** The packed tarball's size in bytes. */
let packedSize: number;

beforeAll(() => {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'pipe' });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-pack-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }).toString());
  files = packed[0].files.map((f: { path: string }) => f.path);
  packedSize = packed[0].size;
  const modules = path.join(scratch, 'node_modules');
  fs.mkdirSync(path.join(modules, 'holdfast'), { recursive: true });
  execFileSync('tar', ['xzf', path.join(scratch, packed[0].filename), '-C', path.join(modules, 'holdfast'), '--strip-components=1']);
  // Its dependency and peers come from this checkout, as npm would install them.
  for (const dep of ['eventemitter3', 'ioredis']) fs.symlinkSync(path.join(root, 'node_modules', dep), path.join(modules, dep));
  fs.mkdirSync(path.join(modules, '@opentelemetry'));
  fs.symlinkSync(path.join(root, 'node_modules', '@opentelemetry', 'api'), path.join(modules, '@opentelemetry', 'api'));
}, 120_000);
afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

it('ships only what users need, with no install-time scripts', () => {
  for (const f of files) expect(f).toMatch(/^(dist\/(cjs|esm)\/.*\.(js|d\.ts|json)$|README\.md$|LICENSE$|package\.json$)/);
  expect(files).toEqual(
    expect.arrayContaining(['dist/cjs/index.js', 'dist/esm/index.js', 'dist/cjs/index.d.ts', 'dist/esm/index.d.ts', 'dist/cjs/otel/index.js', 'dist/esm/otel/index.js', 'dist/cjs/otel/index.d.ts', 'dist/esm/otel/index.d.ts', 'dist/cjs/nest/index.js', 'dist/esm/nest/index.js', 'dist/cjs/cli/index.js', 'README.md', 'LICENSE']),
  );
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts?.[hook]).toBeUndefined();
  expect(pkg.engines.node).toBeDefined();
  // Source maps are not shipped, so no shipped file may point at one.
  const dangling = files.filter((f) => f.endsWith('.js') && /^\/\/# sourceMappingURL=/m.test(fs.readFileSync(path.join(scratch, 'node_modules', 'holdfast', f), 'utf8')));
  expect(dangling).toEqual([]);
  // Each Lua script ships once, in the .js: a declaration holds its type, not its text.
  const withLua = files.filter((f) => f.endsWith('.d.ts') && /redis\.call\(/.test(fs.readFileSync(path.join(scratch, 'node_modules', 'holdfast', f), 'utf8')));
  expect(withLua).toEqual([]);
  // Nor does any other text ship twice: a long string constant is declared `string`, not as its literal (the CLI's help).
  const withText = files.filter((f) => f.endsWith('.d.ts') && /=\s*"(?:[^"\\]|\\.){200,}"/.test(fs.readFileSync(path.join(scratch, 'node_modules', 'holdfast', f), 'utf8')));
  expect(withText).toEqual([]);
  // The bin's modules are not importable (no ./cli in "exports"): no declarations for them.
  expect(files.filter((f) => f.startsWith('dist/cjs/cli/') && f.endsWith('.d.ts'))).toEqual([]);
  // Issue 31's budget: below the 244 kB the package weighed when the Lua scripts shipped twice.
  expect(packedSize).toBeLessThan(244_000);
});

it('names its repository, and its README has no link that is dead on the npm page', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const repository = 'https://github.com/holdfast-js/holdfast';
  expect(pkg.repository).toEqual({ type: 'git', url: `git+${repository}.git` });
  expect(pkg.homepage).toBe(`${repository}#readme`);
  expect(pkg.bugs).toEqual({ url: `${repository}/issues` });
  expect(REPORT_TO).toBe(pkg.bugs.url); // where the CLI's exit 71 says to report
  // The npm page shows the packed README, beside nothing else: a relative link works only
  // to a packed file. docs/ is not packed (it would double the package): the README links
  // there through the repository, and those links must name files that exist.
  const readme = fs.readFileSync(path.join(scratch, 'node_modules', 'holdfast', 'README.md'), 'utf8');
  const targets = [...readme.matchAll(/\]\(([^)\s]+)\)|\b(?:href|src)="([^"]+)"/g)].map((m) => m[1] ?? m[2]!);
  expect(targets.length).toBeGreaterThan(5);
  const dead = targets.filter((t) => {
    if (t.startsWith('#')) return false;
    const inRepository = new RegExp(`^${repository}/(?:blob|tree)/main/([^#?]+)`).exec(t);
    if (inRepository) return !fs.existsSync(path.join(root, inRepository[1]!));
    if (/^https?:\/\//.test(t)) return false;
    return !files.includes(t.replace(/[#?].*$/, '').replace(/^\.\//, ''));
  });
  expect(dead).toEqual([]);
});

it('loads with require() from CommonJS, holdfast/otel too, and only holdfast/otel loads @opentelemetry/api', () => {
  const out = execFileSync(process.execPath, ['-e', "const h = require('holdfast'); console.log(typeof h.LockClient, typeof h.LockLostError, new h.QuorumError('x', 'acquire', 2, []) instanceof h.LockError)"], { cwd: scratch }).toString();
  expect(out.trim()).toBe('function function true');
  const otel = execFileSync(
    process.execPath,
    ['-e', "const loaded = () => Object.keys(require.cache).some((f) => f.includes('@opentelemetry')); require('holdfast'); const before = loaded(); const o = require('holdfast/otel'); console.log(before, loaded(), typeof o.instrument)"],
    { cwd: scratch },
  ).toString();
  expect(otel.trim()).toBe('false true function');
});

it('holdfast/nest loads with require() and import, the same module both ways, and only it loads NestJS', () => {
  const modules = path.join(scratch, 'node_modules');
  fs.mkdirSync(path.join(modules, '@nestjs'), { recursive: true });
  for (const dep of ['@nestjs/common', '@nestjs/core', 'rxjs', 'reflect-metadata']) {
    if (!fs.existsSync(path.join(modules, dep))) fs.symlinkSync(path.join(root, 'node_modules', dep), path.join(modules, dep));
  }
  const cjs = execFileSync(
    process.execPath,
    ['-e', "const loaded = () => Object.keys(require.cache).some((f) => f.includes('@nestjs')); require('holdfast'); const before = loaded(); const n = require('holdfast/nest'); console.log(before, loaded(), typeof n.HoldfastModule, typeof n.WithLock)"],
    { cwd: scratch },
  ).toString();
  expect(cjs.trim()).toBe('false true function function');
  const esm = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', "import { createRequire } from 'node:module'; import { HoldfastModule } from 'holdfast/nest'; import { LockClient } from 'holdfast'; const r = createRequire(import.meta.url); console.log(HoldfastModule === r('holdfast/nest').HoldfastModule, LockClient === r('holdfast').LockClient)"],
    { cwd: scratch },
  ).toString();
  expect(esm.trim()).toBe('true true');
});

it('runs the bin', () => {
  const out = execFileSync(process.execPath, [path.join(scratch, 'node_modules', 'holdfast', 'dist', 'cjs', 'cli', 'index.js'), '--version'], { cwd: scratch }).toString();
  expect(out.trim()).toBe(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);
});

describe('the bin in a project without ioredis', () => {
  /** A project holding a copy of the unpacked package (a copy: a symlink would resolve to the scratch project, which has ioredis) and `deps` from this checkout. */
  let projects: string;
  beforeAll(() => {
    // Not under scratch: require() would find scratch's ioredis on its way up.
    projects = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-projects-'));
  });
  afterAll(() => fs.rmSync(projects, { recursive: true, force: true }));
  const project = (label: string, deps: string[]): string => {
    const dir = path.join(projects, label);
    fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    fs.cpSync(path.join(scratch, 'node_modules', 'holdfast'), path.join(dir, 'node_modules', 'holdfast'), { recursive: true });
    for (const dep of ['eventemitter3', ...deps]) fs.symlinkSync(path.join(root, 'node_modules', dep), path.join(dir, 'node_modules', dep));
    return dir;
  };
  const run = (dir: string, args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(dir, 'node_modules', 'holdfast', 'dist', 'cjs', 'cli', 'index.js'), ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;

  it.each([
    ['an empty project', []],
    ['a project with only node-redis', ['redis']],
  ])('in %s: --help and --version work; a command says in one line what to install, exit 69', (label, deps) => {
    const dir = project(label.replace(/\W+/g, '-'), deps);
    expect(run(dir, ['--version'])).toEqual({ status: 0, stdout: `${version}\n`, stderr: '' });
    const help = run(dir, ['--help']);
    expect([help.status, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^Usage:$/m);
    expect(run(dir, ['exec', '--help']).status).toBe(0);
    expect(run(dir, ['status']).status).toBe(64); // usage errors before any connection
    const status = run(dir, ['status', 'a-lock']);
    expect(status.status).toBe(69);
    expect(status.stderr).toMatch(/^holdfast: .*ioredis.*npm install ioredis.*\n$/);
    expect(status.stderr.split('\n')).toHaveLength(2); // one line, no stack
  });

  it('in a project with only iovalkey: connects with it', async () => {
    const dir = project('iovalkey-only', ['iovalkey']);
    const server = await startServer();
    try {
      const ls = run(dir, ['ls', '--redis', `redis://127.0.0.1:${server.port}`]);
      expect([ls.status, ls.stderr]).toEqual([0, '']);
    } finally {
      await server.stop();
    }
  });
});

it('loads with import from ESM, holdfast/otel too (the same function as require gives)', () => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', "import { LockClient, LockNotHeldError } from 'holdfast'; console.log(typeof LockClient, typeof LockNotHeldError)"], { cwd: scratch }).toString();
  expect(out.trim()).toBe('function function');
  const otel = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', "import { createRequire } from 'node:module'; import { instrument } from 'holdfast/otel'; console.log(typeof instrument, instrument === createRequire(import.meta.url)('holdfast/otel').instrument)"],
    { cwd: scratch },
  ).toString();
  expect(otel.trim()).toBe('function true');
});

it('type-checks a consumer under node16 module resolution, for import and require', () => {
  fs.writeFileSync(
    path.join(scratch, 'use.mts'),
    [
      "import { LockClient, LockUnavailableError, QuorumError, type LockErrorCode, type LockKind, type LostEvent } from 'holdfast';",
      "import { instrument, type InstrumentOptions } from 'holdfast/otel';",
      "export const f = (c: LockClient) => c.on('lost', (e: LostEvent) => e.reason);",
      "export const kind = (e: LostEvent): LockKind => e.kind;",
      'export const o: InstrumentOptions = { names: true };',
      'export const stop: () => void = instrument(new LockClient([]), o);',
      "export const code = (e: unknown): LockErrorCode | undefined => (e instanceof LockUnavailableError ? e.code : undefined);",
      "export const votes = (e: QuorumError) => [e.votes.length, e.cause] as const;",
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(scratch, 'use.cts'),
    "import holdfast = require('holdfast');\nimport otel = require('holdfast/otel');\nexport const g = (c: holdfast.LockClient) => c.getLock('a').tryLock(1, 100);\nexport const h = (c: holdfast.LockClient): (() => void) => otel.instrument(c, { names: false });\n",
  );
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), 'use.mts', 'use.cts'], { cwd: scratch, stdio: 'pipe' });
});

// TypeScript before node16 (moduleResolution node10, still the default of `module:
// commonjs`) ignores "exports": the subpaths resolve through "typesVersions" there.
it.each([
  ['node10', 'commonjs'],
  ['bundler', 'esnext'],
])('type-checks a consumer of holdfast, holdfast/otel and holdfast/nest under moduleResolution %s', (resolution, module) => {
  const dir = path.join(scratch, `resolution-${resolution}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(
    path.join(dir, 'use.ts'),
    [
      "import { LockClient, type LostEvent } from 'holdfast';",
      "import { instrument, type InstrumentOptions } from 'holdfast/otel';",
      "import { HoldfastModule } from 'holdfast/nest';",
      'export const o: InstrumentOptions = { names: true };',
      'export const stop: () => void = instrument(new LockClient([]), o);',
      "export const reason = (e: LostEvent): string => e.reason;",
      'export const nest: object = HoldfastModule;',
      '',
    ].join('\n'),
  );
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = ['--noEmit', '--strict', '--module', module, '--moduleResolution', resolution, '--target', 'es2022', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), '--noImplicitAny', 'use.ts'];
  const r = spawnSync(process.execPath, [tsc, ...args], { cwd: dir, encoding: 'utf8' });
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
});

// One copy of the library whichever way it is loaded: the ESM entry re-exports the
// CommonJS build's own objects, so classes (and the scope storage behind LockClient)
// are shared, and an error thrown through one entry is `instanceof` the other's class.
it('hands out the same classes to import and require, so instanceof works across them', () => {
  fs.writeFileSync(
    path.join(scratch, 'identity.mjs'),
    `
import { createRequire } from 'node:module';
import * as esm from 'holdfast';
import Redis from 'ioredis';
const cjs = createRequire(import.meta.url)('holdfast');
const make = (h) => [
  new h.LockError('m'),
  new h.LockNotHeldError('n'),
  new h.LockLostError('n', 'o', 'taken'),
  new h.LockTimeoutError('n', 5),
  new h.LockUnavailableError('n', 'm'),
  new h.QuorumError('n', 'acquire', 2, []),
  new h.CommandTimeoutError('EVALSHA', 10, 'n'),
];
// Thrown by the library itself: unlock() of a handle that holds nothing, before anything is sent.
async function thrown(h) {
  const redis = new Redis({ port: 1, lazyConnect: true, retryStrategy: () => null });
  redis.on('error', () => {});
  const locks = new h.LockClient(redis);
  try {
    await locks.getLock('a').unlock();
  } catch (e) {
    return e;
  } finally {
    await locks.close();
    redis.disconnect();
  }
}
const check = (errors, h) => errors.map((e) => e instanceof h[e.name] && e instanceof h.LockError && e instanceof Error);
console.log(JSON.stringify({
  sameObjects: Object.keys(esm).filter((k) => esm[k] !== cjs[k]),
  missingFromEsm: Object.keys(cjs).filter((k) => k !== '__esModule' && !(k in esm)),
  cjsErrorsAgainstEsm: check([...make(cjs), await thrown(cjs)], esm),
  esmErrorsAgainstCjs: check([...make(esm), await thrown(esm)], cjs),
  thrownName: (await thrown(esm)).name,
}));
`,
  );
  const out = JSON.parse(execFileSync(process.execPath, ['identity.mjs'], { cwd: scratch }).toString());
  const all = Array(8).fill(true);
  expect(out).toEqual({ sameObjects: [], missingFromEsm: [], cjsErrorsAgainstEsm: all, esmErrorsAgainstCjs: all, thrownName: 'LockNotHeldError' });
});

// ---- published types: the public API only ---------------------------------------------

/** `file#Container.member` (or `file#name` at top level) of every declaration in a file, with whether it is marked @internal. */
function declarations(file: string, relative: string): { key: string; internal: boolean }[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { key: string; internal: boolean }[] = [];
  const nameOf = (n: ts.Node): string | undefined => {
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    const name = (n as { name?: ts.Node }).name;
    return name && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) ? name.text : undefined;
  };
  const visit = (n: ts.Node, container: string[]): void => {
    const isDeclaration =
      ts.isClassElement(n) || ts.isTypeElement(n) || ts.isEnumMember(n) || ts.isFunctionDeclaration(n) || ts.isClassDeclaration(n) || ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n) || ts.isEnumDeclaration(n) || ts.isModuleDeclaration(n) || ts.isVariableStatement(n) || ts.isParameterPropertyDeclaration(n, n.parent);
    if (!isDeclaration) return n.forEachChild((c) => visit(c, container));
    const internal = ts.getJSDocTags(n).some((t) => t.tagName.text === 'internal');
    const names = ts.isVariableStatement(n) ? n.declarationList.declarations.map((d) => nameOf(d)) : [nameOf(n)];
    for (const name of names) if (name) found.push({ key: `${relative}#${[...container, name].join('.')}`, internal });
    const inner = ts.isClassDeclaration(n) || ts.isInterfaceDeclaration(n) || ts.isEnumDeclaration(n) || ts.isModuleDeclaration(n) ? [...container, names[0] ?? '?'] : container;
    n.forEachChild((c) => visit(c, inner));
  };
  visit(source, []);
  return found;
}

/** The shipped .d.ts files reachable from the package's type entry points, relative to dist/cjs, without extension. */
function shippedDeclarations(): string[] {
  const base = path.join(scratch, 'node_modules', 'holdfast', 'dist', 'cjs');
  const todo = [path.join(base, 'index.d.ts'), path.join(base, '..', 'esm', 'index.d.ts'), path.join(base, 'otel', 'index.d.ts'), path.join(base, '..', 'esm', 'otel', 'index.d.ts')];
  const seen = new Set<string>();
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    // Generated declarations: every reference is `from '...'`, `import('...')` or `import '...'`.
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      todo.push(path.resolve(path.dirname(file), m[1].replace(/\.js$/, '.d.ts')));
    }
  }
  return [...seen].map((f) => path.relative(base, f).replace(/\.d\.ts$/, ''));
}

function libSources(dir = path.join(root, 'lib')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? libSources(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path.join(dir, e.name)] : []));
}

it('publishes no declaration marked @internal in lib/', () => {
  const internal = new Set(
    libSources()
      .flatMap((f) => declarations(f, path.relative(path.join(root, 'lib'), f).replace(/\.ts$/, '')))
      .filter((d) => d.internal)
      .map((d) => d.key),
  );
  const shipped = shippedDeclarations();
  expect(shipped).toEqual(expect.arrayContaining(['index', 'client', path.join('errors', 'LockError'), path.join('otel', 'index'), path.join('otel', 'options')]));
  const base = path.join(scratch, 'node_modules', 'holdfast', 'dist', 'cjs');
  const leaked = shipped.flatMap((rel) => declarations(path.join(base, `${rel}.d.ts`), rel)).filter((d) => internal.has(d.key) || d.internal);
  expect(leaked).toEqual([]);
});

it("declares LockClient's public API and nothing else", () => {
  const file = path.join(scratch, 'node_modules', 'holdfast', 'dist', 'cjs', 'client.d.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const declaration = source.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'LockClient');
  expect(declaration).toBeDefined();
  // Private members show in declarations by name only (no type): not callable, not API.
  const isPrivate = (m: ts.ClassElement) => (m.name !== undefined && ts.isPrivateIdentifier(m.name)) || (ts.canHaveModifiers(m) && ts.getModifiers(m)?.some((k) => k.kind === ts.SyntaxKind.PrivateKeyword));
  const members = declaration!.members.filter((m) => !ts.isConstructorDeclaration(m) && !isPrivate(m)).map((m) => (m.name ? (m.name as ts.Identifier).text : ts.SyntaxKind[m.kind]));
  const allowed = ['id', 'getLock', 'getFairLock', 'getMultiLock', 'getReadWriteLock', 'getSemaphore', 'scope', 'close', 'isClosed'];
  expect(members.filter((m) => !allowed.includes(m))).toEqual([]);
  expect(members).toEqual(expect.arrayContaining(['getLock', 'scope', 'close']));
});
