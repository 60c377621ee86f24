// Writes lib/lua/index.ts: every lib/lua/*.lua as an exported string, so the library
// needs no file lookups or loaders at run time (CommonJS, ESM, tsx, jest alike).
// Run by `npm run build`; spec/lua.spec.ts fails when the committed file is stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'lua');

export function render() {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.lua')).sort();
  const camel = (f) => f.replace(/\.lua$/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const body = files.map((f) => `export const ${camel(f)} = ${JSON.stringify(fs.readFileSync(path.join(dir, f), 'utf8'))};\n`).join('\n');
  return `// Generated from lib/lua/*.lua by scripts/embed-lua.mjs: edit the .lua files, then npm run build.\n\n${body}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  fs.writeFileSync(path.join(dir, 'index.ts'), render());
}
