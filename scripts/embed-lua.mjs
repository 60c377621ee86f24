// Writes a sources.ts beside the Lua scripts of each folder of lib/ that has some (a
// primitive's folder, and lib/store/scripts): every script as an exported string, so
// the library needs no file lookups or loaders at run time (CommonJS, ESM, tsx, jest
// alike). Typed `string`, not inferred: an inferred literal type would repeat every
// script in the published declarations. A file named _x.lua is a prelude: it is put in front of every script that
// calls the function it defines (x), so shared Lua is written once. A folder's scripts
// see its own preludes and the shared ones of lib/store/scripts.
// Comments stay in the .lua files (see code()). Run by `npm run build`; spec/lua.spec.ts
// fails when a committed file is stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = path.join(root, 'lib');
/** The preludes every folder may use. */
export const shared = path.join(lib, 'store', 'scripts');

/** Every folder under lib/ holding a script that is not a prelude. */
export function folders(dir = lib) {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  const here = entries.some((e) => e.isFile() && e.name.endsWith('.lua') && !e.name.startsWith('_')) ? [dir] : [];
  return [...here, ...entries.filter((e) => e.isDirectory()).flatMap((e) => folders(path.join(dir, e.name)))];
}

const luaIn = (dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.lua')).sort();

/**
 * A script's text as Redis gets it: without its full-line comments and blank lines.
 * Those are for readers of the .lua files; every prelude is copied into each script
 * that calls it, and each script ships in the package and is loaded on every master.
 */
const code = (text) => text.split('\n').filter((line) => line.trim() !== '' && !line.trimStart().startsWith('--')).join('\n') + '\n';

/** The sources.ts of one folder. */
export function render(dir) {
  const own = luaIn(dir);
  const preludeFiles = [...new Set([...(dir === shared ? [] : luaIn(shared).map((f) => path.join(shared, f))), ...own.map((f) => path.join(dir, f))])].filter((f) => path.basename(f).startsWith('_'));
  // A prelude defines one or more local functions; it goes in front of a script that
  // calls one of them, directly or through another prelude it includes (order: the
  // shared preludes by name, then the folder's: a prelude may call only those before it).
  const preludes = preludeFiles.map((f) => {
    const text = fs.readFileSync(f, 'utf8');
    const fns = [...text.matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]);
    return { calls: new RegExp(`\\b(${fns.join('|')})\\(`), text };
  });
  const camel = (f) => f.replace(/\.lua$/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const body = own
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
      const ordered = preludes.filter((p) => used.has(p)).map((p) => code(p.text));
      return `export const ${camel(f)}: string = ${JSON.stringify(ordered.join('') + code(text))};\n`;
    })
    .join('\n');
  const where = path.relative(root, dir);
  return `// Generated from ${where}/*.lua by scripts/embed-lua.mjs: edit the .lua files, then npm run build.\n\n${body}`;
}

/** Path of each folder's sources.ts -> its content. */
export function renderAll() {
  return new Map(folders().map((dir) => [path.join(dir, 'sources.ts'), render(dir)]));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  for (const [file, text] of renderAll()) fs.writeFileSync(file, text);
}
