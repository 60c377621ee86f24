// Writes lib/store/scripts/sources.ts: every lib/store/scripts/*.lua as an exported
// string, so the library needs no file lookups or loaders at run time (CommonJS, ESM,
// tsx, jest alike). A file named _x.lua is a prelude: it is put in front of every
// script that calls the function it defines (x), so shared Lua is written once.
// Run by `npm run build`; spec/lua.spec.ts fails when the committed file is stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'store', 'scripts');
export const output = path.join(dir, 'sources.ts');

export function render() {
  const all = fs.readdirSync(dir).filter((f) => f.endsWith('.lua')).sort();
  // A prelude defines one or more local functions; it goes in front of a script that
  // calls one of them, directly or through another prelude it includes (file order:
  // a prelude may call only preludes whose names sort before its own).
  const preludes = all
    .filter((f) => f.startsWith('_'))
    .map((f) => {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      const fns = [...text.matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]);
      return { calls: new RegExp(`\\b(${fns.join('|')})\\(`), text };
    });
  const camel = (f) => f.replace(/\.lua$/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const body = all
    .filter((f) => !f.startsWith('_'))
    .map((f) => {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      const used = new Set();
      for (let grew = true; grew; ) {
        grew = false;
        const reach = [text, ...[...used].map((p) => p.text)];
        for (const p of preludes) {
          if (!used.has(p) && reach.some((t) => t !== p.text && p.calls.test(t))) {
            used.add(p);
            grew = true;
          }
        }
      }
      const ordered = preludes.filter((p) => used.has(p)).map((p) => p.text);
      return `export const ${camel(f)} = ${JSON.stringify(ordered.join('') + text)};\n`;
    })
    .join('\n');
  return `// Generated from lib/store/scripts/*.lua by scripts/embed-lua.mjs: edit the .lua files, then npm run build.\n\n${body}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  fs.writeFileSync(output, render());
}
