// Writes a sources.ts beside the Lua scripts of each folder of lib/ that has some (a
// primitive's folder, and lib/store/scripts): every script as an exported string, so
// the library needs no file lookups or loaders at run time (CommonJS, ESM, tsx, jest
// alike). Typed `string`, not inferred: an inferred literal type would repeat every
// script in the published declarations. A file named _x.lua is a prelude of shared
// definitions (its top-level `local` lines: functions and constants), so shared Lua is
// written once; a script gets the definitions it names, directly or through each other,
// in their files' order (the shared preludes of lib/store/scripts by name, then its own
// folder's: a definition may name only those before it). Lua makes every function of a
// script anew on each call (a closure, with its upvalues), so a script carries no
// definition it does not use. A script may begin with a head that ends at a line
// `-- @preludes`: the head gets the definitions it names before it, and every other
// definition the script names comes after it, so a call the head answers (the
// uncontended one) makes none of them.
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

/**
 * A script's head (up to its `-- @preludes` line, '' without one) and the rest.
 */
function splitHead(text) {
  const marker = /^-- @preludes\b.*$/m.exec(text);
  if (!marker) return ['', text];
  return [text.slice(0, marker.index), text.slice(marker.index + marker[0].length)];
}

/**
 * A prelude's definitions in order: each from a top-level `local` line to the next one
 * (a function's body is indented, its `end` at the start of a line), with the names it
 * defines.
 */
function definitions(prelude) {
  const defs = [];
  for (const line of code(prelude).split('\n')) {
    if (line.startsWith('local ')) {
      const fn = /^local function (\w+)\(/.exec(line);
      const names = fn ? [fn[1]] : line.replace(/^local /, '').split('=')[0].split(',').map((n) => n.trim());
      // A name read wrong would never be matched, and its definition silently left out.
      if (!names.every((n) => /^\w+$/.test(n))) throw new Error(`a prelude definition this script cannot name: ${line}`);
      defs.push({ names, text: '' });
    }
    if (line !== '') {
      if (defs.length === 0) throw new Error(`a prelude's first code line must be a top-level local: ${line}`);
      defs[defs.length - 1].text += line + '\n';
    }
  }
  return defs.map((d) => ({ ...d, named: new RegExp(`\\b(${d.names.join('|')})\\b`) }));
}

/** The sources.ts of one folder. */
export function render(dir) {
  const own = luaIn(dir);
  const preludeFiles = [...new Set([...(dir === shared ? [] : luaIn(shared).map((f) => path.join(shared, f))), ...own.map((f) => path.join(dir, f))])].filter((f) => path.basename(f).startsWith('_'));
  const defs = preludeFiles.flatMap((f) => definitions(fs.readFileSync(f, 'utf8')));
  const camel = (f) => f.replace(/\.lua$/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  // The definitions `text` names, directly or through each other, with those in `known`.
  const reached = (text, known = new Set()) => {
    const used = new Set(known);
    for (let grew = true; grew; ) {
      grew = false;
      const reach = [text, ...[...used].map((d) => d.text)];
      for (const d of defs) {
        if (!used.has(d) && reach.some((t) => t !== d.text && d.named.test(t))) {
          used.add(d);
          grew = true;
        }
      }
    }
    return used;
  };
  const inOrder = (used, except = new Set()) =>
    defs
      .filter((d) => used.has(d) && !except.has(d))
      .map((d) => d.text)
      .join('');
  const body = own
    .filter((f) => !f.startsWith('_'))
    .map((f) => {
      const [head, rest] = splitHead(fs.readFileSync(path.join(dir, f), 'utf8'));
      const early = reached(code(head));
      const all = reached(code(head) + code(rest), early);
      const script = inOrder(early) + (head === '' ? '' : code(head)) + inOrder(all, early) + code(rest);
      return `export const ${camel(f)}: string = ${JSON.stringify(script)};\n`;
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
