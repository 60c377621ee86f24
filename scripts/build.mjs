// npm run build: Lua scripts embedded, then CommonJS (dist/cjs, with the bin) and ESM
// (dist/esm) from the same sources with tsc, each folder marked with its module type.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const run = (...args) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });

fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
run(path.join(root, 'scripts', 'embed-lua.mjs'));
run(tsc, '-p', 'tsconfig.build.json');
run(tsc, '-p', 'tsconfig.esm.json');
fs.writeFileSync(path.join(root, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
fs.writeFileSync(path.join(root, 'dist', 'esm', 'package.json'), '{ "type": "module" }\n');
fs.chmodSync(path.join(root, 'dist', 'cjs', 'cli', 'index.js'), 0o755);
