import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The documentation's code must be code that compiles where users put it: every
// `@example` in lib/'s doc comments (they become the API reference), every file in
// examples/ (the README quotes them), and every README snippet that starts with its
// imports, type-checked as ES modules under `"module": "node16"` (the setting under
// which a default import of ioredis does not type-check) against lib/'s sources.
// Nothing is written to disk: the snippets are served from memory to one program.

const root = path.resolve(__dirname, '..');
const scratch = path.join(root, '.doc-snippets');

function libSources(dir = path.join(root, 'lib')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? libSources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** The ```ts blocks of every @example tag in a source file. */
function examplesIn(file: string): string[] {
  const found: string[] = [];
  for (const comment of fs.readFileSync(file, 'utf8').matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    const text = comment[1].replace(/^[ \t]*\* ?/gm, '');
    for (const tag of text.split(/^@/m).filter((t) => t.startsWith('example'))) {
      for (const block of tag.matchAll(/```ts\n([\s\S]*?)```/g)) found.push(block[1]);
    }
  }
  return found;
}

/** A snippet as a module: its imports on top, the rest in an async function (so `return` and `await using` work). */
function asModule(snippet: string): string {
  const lines = snippet.split('\n');
  const imports = lines.filter((l) => /^import\s/.test(l));
  const body = lines.filter((l) => !/^import\s/.test(l));
  // A snippet that exports is a module already (an example file quoted whole).
  if (body.some((l) => /^export\s/.test(l))) return snippet;
  return `${imports.join('\n')}\nexport async function example() {\n${body.join('\n')}\n}\n`;
}

/** What the snippets take as given (a script: these are globals; a snippet's own imports shadow them). */
const givens = `
declare const locks: import('holdfast').LockClient;
declare const lock: import('holdfast').Lock;
declare const redis: import('ioredis').Redis;
declare const r1: import('ioredis').Redis, r2: import('ioredis').Redis, r3: import('ioredis').Redis;
declare const Redis: typeof import('ioredis').Redis;
declare const Cluster: typeof import('ioredis').Cluster;
declare const LockClient: typeof import('holdfast').LockClient;
declare const LockError: typeof import('holdfast').LockError;
declare const LockNotHeldError: typeof import('holdfast').LockNotHeldError;
declare const LockLostError: typeof import('holdfast').LockLostError;
declare const LockTimeoutError: typeof import('holdfast').LockTimeoutError;
declare const LockUnavailableError: typeof import('holdfast').LockUnavailableError;
declare const QuorumError: typeof import('holdfast').QuorumError;
declare const CommandTimeoutError: typeof import('holdfast').CommandTimeoutError;
declare const id: string, job: string, entry: string;
declare const waitTime: number, leaseTime: number;
declare const signal: AbortSignal;
declare const controller: AbortController;
declare const log: ((...args: unknown[]) => void) & { warn(...args: unknown[]): void; error(...args: unknown[]): void };
declare const metrics: { increment(name: string): void };
declare const store: { write(value: string, token: number): Promise<void> };
declare const ledger: { write(entry: string, token: number): Promise<void> };
declare const app: { use(middleware: (req: unknown, res: unknown, next: () => void) => unknown): void };
declare function work(context?: unknown): Promise<void>;
declare function updateInventory(): Promise<void>;
declare function render(signal: AbortSignal): Promise<string>;
declare function reserveStock(id: string): Promise<void>;
declare function print(job: string): Promise<void>;
`;

function typeCheck(snippets: Map<string, string>): string[] {
  const files = new Map([...snippets].map(([name, text]) => [path.join(scratch, name), text]));
  files.set(path.join(scratch, 'givens.d.ts'), givens);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
    baseUrl: root,
    paths: { holdfast: ['lib/index.ts'], 'holdfast/otel': ['lib/otel/index.ts'], 'holdfast/nest': ['lib/nest/index.ts'] },
    experimentalDecorators: true,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists(f);
  host.readFile = (f) => files.get(f) ?? readFile(f);
  host.getSourceFile = (f, language, onError) => {
    const text = files.get(f);
    return text === undefined ? getSourceFile(f, language, onError) : ts.createSourceFile(f, text, language);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || files.has(d.file.fileName))
    .map((d) => {
      const where = d.file ? `${path.relative(scratch, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
}

const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
/** The README and the guides it links (docs/guides/*.md): the documentation users read. */
const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs', 'guides')).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`)];
const pageBlocks = pages.flatMap((page) => [...fs.readFileSync(path.join(root, page), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => ({ page, code: m[1] })));
const readmeBlocks = pageBlocks.map((b) => b.code);
const exampleFiles = fs.readdirSync(path.join(root, 'examples')).filter((f) => f.endsWith('.ts'));

it("states package.json's engines range in the README", () => {
  const { engines } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const least = /^>=(\d+(?:\.\d+)*)$/.exec(engines.node);
  expect(least).not.toBeNull();
  expect(readme.replace(/\s+/g, ' ')).toContain(`Node.js ${least![1]} or later`);
});

it('imports ioredis and iovalkey by name in the README, the guides and the examples (their default exports fail under node16)', () => {
  const texts = [...readmeBlocks, ...exampleFiles.map((f) => fs.readFileSync(path.join(root, 'examples', f), 'utf8'))];
  const defaultImports = texts.flatMap((t) => t.split('\n')).filter((l) => /^import\s+[\w$]+\s*(,|from)/.test(l) && /from '(ioredis|iovalkey)'/.test(l));
  expect(defaultImports).toEqual([]);
});

it('has @examples that type-check, as do examples/ and the README and guide snippets with imports, as ES modules under node16', () => {
  const snippets = new Map<string, string>();
  for (const file of libSources()) {
    examplesIn(file).forEach((code, i) => snippets.set(`${path.relative(path.join(root, 'lib'), file).replace(/[/\\]/g, '_')}.${i + 1}.mts`, asModule(code)));
  }
  // Every public module documents its methods with examples: finding none means the extraction broke.
  expect([...snippets.keys()].filter((k) => k.startsWith('handles_types.ts.')).length).toBeGreaterThan(10);
  for (const f of exampleFiles) snippets.set(`examples_${f.replace(/\.ts$/, '.mts')}`, fs.readFileSync(path.join(root, 'examples', f), 'utf8'));
  // A page's snippet without imports takes the givens above for granted; one that exports is a quoted examples/ file (examples.spec).
  pageBlocks.filter((b) => !b.code.startsWith('import ') && !/^export /m.test(b.code)).forEach((b, i) => snippets.set(`${b.page.replace(/[/\\]/g, '_')}.given.${i + 1}.mts`, asModule(b.code)));
  pageBlocks.filter((b) => b.code.startsWith('import ')).forEach((b, i) => snippets.set(`${b.page.replace(/[/\\]/g, '_')}.${i + 1}.mts`, asModule(b.code)));
  expect(typeCheck(snippets)).toEqual([]);
}, 60_000);
