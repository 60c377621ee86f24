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
  const preludes = all.filter((f) => f.startsWith('_')).map((f) => ({ fn: f.slice(1, -4), text: fs.readFileSync(path.join(dir, f), 'utf8') }));
  const camel = (f) => f.replace(/\.lua$/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const body = all
    .filter((f) => !f.startsWith('_'))
    .map((f) => {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      const calls = (lua, p) => new RegExp(`\\b${p.fn}\\(`).test(lua);
      // A prelude may call another's function (semWake calls notify): taken transitively,
      // put in front in file order.
      let used = new Set(preludes.filter((p) => calls(text, p)));
      for (let more = true; more; ) {
        const next = preludes.filter((p) => used.has(p) || [...used].some((u) => calls(u.text, p)));
        more = next.length > used.size;
        used = new Set(next);
      }
      return `export const ${camel(f)} = ${JSON.stringify(preludes.filter((p) => used.has(p)).map((p) => p.text).join('') + text)};\n`;
    })
    .join('\n');
  return `// Generated from lib/store/scripts/*.lua by scripts/embed-lua.mjs: edit the .lua files, then npm run build.\n\n${body}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  fs.writeFileSync(output, render());
}
