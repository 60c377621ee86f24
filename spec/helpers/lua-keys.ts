/**
 * Which keys a script touches without having been passed them in KEYS: Dragonfly
 * refuses such a script ("script tried accessing undeclared key"), and Redis Cluster
 * routes a script by its KEYS only. A static check of the scripts' source, strict on
 * purpose: every key argument of a redis.call must be KEYS[...] or a name (a local, a
 * table field, a function parameter, a loop variable) that every binding of it in the
 * script gives such a value, or `c and A or B` of two of them. A key built in Lua
 * (concatenated, a literal, a function's result) fails, and so does anything the check
 * cannot follow: rewrite the script rather than the check.
 */

/** Which arguments of each command the scripts use are keys; a command not listed fails the check until it is. */
const KEY_ARGS: Record<string, 'first' | 'all' | 'none'> = {
  get: 'first', set: 'first', incr: 'first', pexpire: 'first', pttl: 'first',
  del: 'all', exists: 'all',
  hget: 'first', hmget: 'first', hset: 'first', hsetnx: 'first', hdel: 'first', hexists: 'first', hgetall: 'first', hincrby: 'first', hkeys: 'first', hlen: 'first',
  lindex: 'first', lpop: 'first', lrange: 'first', llen: 'first', lrem: 'first', rpush: 'first',
  zadd: 'first', zrem: 'first', zscore: 'first', zrange: 'first', zrangebyscore: 'first',
  // Channels are not keys: Dragonfly checks the keys a script touches, not where it publishes.
  publish: 'none', spublish: 'none', time: 'none', info: 'none',
};

/** The text from `open` (an opening bracket) to its match, exclusive; quotes respected. */
function enclosed(text: string, open: number): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c) && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced bracket at ${open}`);
}

/** `text` split at its top-level commas, or up to the first newline or unmatched closer (an expression list). */
function list(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c) && --depth < 0) return [...parts, text.slice(start, i)].map((p) => p.trim());
    else if (depth === 0 && c === '\n') return [...parts, text.slice(start, i)].map((p) => p.trim());
    else if (depth === 0 && c === ',') {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return [...parts, text.slice(start)].map((p) => p.trim());
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface LuaFunction {
  /** '' for an anonymous function. */
  name: string;
  params: string[];
  /** Its text: from `function` to its `end`. */
  start: number;
  end: number;
}

/** Every function of `text` (comments stripped), with its extent: blocks counted by their keywords outside strings. */
function functions(text: string): LuaFunction[] {
  const found: LuaFunction[] = [];
  for (const m of text.matchAll(/\bfunction\s*(\w*)\s*\(([^)]*)\)/g)) {
    let depth = 1;
    const words = /'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|\b(function|if|do|end)\b/g;
    words.lastIndex = m.index! + m[0].length;
    let end = text.length;
    for (let w = words.exec(text); w; w = words.exec(text)) {
      if (w[1] === 'end') depth--;
      else if (w[1]) depth++;
      if (depth === 0) {
        end = w.index + 3;
        break;
      }
    }
    found.push({ name: m[1]!, params: m[2]!.split(',').map((p) => p.trim()), start: m.index!, end });
  }
  return found;
}

/** The problems found in one script (its full text, preludes included): an empty list when every key comes from KEYS. */
export function undeclaredKeys(source: string): string[] {
  const text = source.replace(/--[^\n]*/g, '');
  const problems: string[] = [];
  // A prelude brings functions a script may never call: what runs only in those is not
  // checked (a function is live when a live place calls it; the script's body is live).
  const fns = functions(text);
  const callsOf = (f: LuaFunction) => [...text.matchAll(new RegExp(`(?<!function\\s*)\\b${escape(f.name)}\\(`, 'g'))].map((c) => c.index!);
  const live = new Set<LuaFunction>(fns.filter((f) => !f.name));
  const isLive = (at: number) => fns.every((f) => at < f.start || at >= f.end || live.has(f));
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of fns) {
      if (live.has(f) || !callsOf(f).some(isLive)) continue;
      live.add(f);
      grew = true;
    }
  }

  /** The values every binding of `name` (an identifier, or `.field`) gives it; undefined for one that cannot be followed. */
  const bindings = (name: string): (string | undefined)[] => {
    const values: (string | undefined)[] = [];
    const after = (re: RegExp, pick = 0) => {
      for (const m of text.matchAll(re)) values.push(list(text.slice(m.index! + m[0].length))[pick]);
    };
    if (name.startsWith('.')) {
      const field = escape(name.slice(1));
      after(new RegExp(`[{,]\\s*${field}\\s*=(?!=)`, 'g')); // in a table constructor
      after(new RegExp(`\\.${field}\\s*=(?!=)`, 'g'));
      return values;
    }
    const n = escape(name);
    for (const m of text.matchAll(/\blocal\s+(?!function)([\w\s,]+?)\s*=(?!=)/g)) {
      const at = m[1]!.split(',').map((s) => s.trim()).indexOf(name);
      if (at >= 0) values.push(list(text.slice(m.index! + m[0].length))[at]);
    }
    after(new RegExp(`(?:^|\\n)[ \\t]*${n}\\s*=(?!=)`, 'g'));
    for (const f of fns) {
      const at = f.params.indexOf(name);
      if (at < 0) continue;
      // An anonymous function's caller cannot be followed.
      if (!f.name) values.push(undefined);
      for (const call of callsOf(f).filter(isLive)) values.push(list(enclosed(text, call + f.name.length))[at]);
    }
    for (const m of text.matchAll(/\bfor\s+([\w\s,]+?)\s+in\s+ipairs\(/g)) {
      const at = m[1]!.split(',').map((s) => s.trim()).indexOf(name);
      if (at < 0) continue;
      const over = enclosed(text, m.index! + m[0].length - 1).trim();
      if (at === 0) values.push(undefined); // an index, never a key
      else if (over === 'KEYS') values.push('KEYS[i]');
      else if (over.startsWith('{')) values.push(...list(enclosed(over, 0)));
      else values.push(undefined);
    }
    return values;
  };

  const declared = (expr: string | undefined, seen: Set<string>): boolean => {
    if (expr === undefined) return false;
    const e = expr.trim();
    if (/^KEYS\[[^\]]+\]$/.test(e)) return true;
    const choice = /^[^()]+ and (\S+) or (\S+)$/.exec(e);
    if (choice) return declared(choice[1], seen) && declared(choice[2], seen);
    const name = /^[A-Za-z_]\w*$/.test(e) ? e : /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)$/.exec(e)?.[1];
    if (name === undefined) return false;
    if (seen.has(name)) return true; // followed already, up the stack
    const values = bindings(name);
    return values.length > 0 && values.every((v) => declared(v, new Set([...seen, name])));
  };

  for (const m of text.matchAll(/\bredis\.p?call\(/g)) {
    if (!isLive(m.index!)) continue;
    const args = list(enclosed(text, m.index! + m[0].length - 1));
    const command = /^'(\w+)'$/.exec(args[0] ?? '')?.[1]?.toLowerCase();
    const keyArgs = command === undefined ? undefined : KEY_ARGS[command];
    if (keyArgs === undefined) {
      problems.push(`redis.call(${args.join(', ')}): unknown command, say which of its arguments are keys in KEY_ARGS`);
      continue;
    }
    const keys = keyArgs === 'none' ? [] : keyArgs === 'first' ? args.slice(1, 2) : args.slice(1);
    for (const key of keys) {
      // `q.lock and redis.call('exists', q.lock)` in a script whose q has no lock: never runs.
      const guarded = text.slice(Math.max(0, m.index! - key.length - 5), m.index) === `${key} and `;
      if (guarded && bindings(key.includes('.') ? key.slice(key.indexOf('.')) : key).length === 0) continue;
      if (!declared(key, new Set())) problems.push(`redis.call(${args.join(', ')}): key ${key} does not come from KEYS`);
    }
  }
  return problems;
}
