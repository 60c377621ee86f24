import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import * as sources from '../lib/store/scripts/sources';
import { undeclaredKeys } from './helpers/lua-keys';

// lib/store/scripts/sources.ts is generated from lib/store/scripts/*.lua (npm run
// build): the committed copy must match the scripts it was made from, or the library
// would run stale Lua. And every script, preludes included, touches only keys it was
// passed in KEYS (spec/helpers/lua-keys.ts).

it('lib/store/scripts/sources.ts matches lib/store/scripts/*.lua', () => {
  const root = path.resolve(__dirname, '..');
  const fresh = execFileSync(process.execPath, ['--input-type=module', '-e', "import { render } from './scripts/embed-lua.mjs'; process.stdout.write(render());"], { cwd: root }).toString();
  expect(fs.readFileSync(path.join(root, 'lib', 'store', 'scripts', 'sources.ts'), 'utf8')).toBe(fresh);
});

describe('every key a script touches is passed in KEYS (Dragonfly refuses others; Cluster routes by KEYS)', () => {
  it.each(Object.entries(sources))('%s', (_, source) => {
    expect(undeclaredKeys(source)).toEqual([]);
  });

  it('the check finds keys built in Lua', () => {
    expect(undeclaredKeys("redis.call('get', KEYS[1] .. ':x')")).toHaveLength(1);
    expect(undeclaredKeys("local k = KEYS[1] .. ':x'\nredis.call('del', KEYS[1], k)")).toHaveLength(1);
    expect(undeclaredKeys("local q = {lock = KEYS[1], queue = 'holdfast:q'}\nredis.call('llen', q.queue)")).toHaveLength(1);
    expect(undeclaredKeys("local function f(key)\n  return redis.call('pttl', key)\nend\nf(KEYS[1])\nf(ARGV[1])")).toHaveLength(1);
    expect(undeclaredKeys("for _, k in ipairs({KEYS[1], ARGV[1]}) do redis.call('pttl', k) end")).toHaveLength(1);
    expect(undeclaredKeys("redis.call('unlink', KEYS[1])")).toHaveLength(1);
    expect(undeclaredKeys("local function f(q)\n  return redis.call('get', q.k)\nend\nreturn f({k = KEYS[1] .. ':x'})")).toHaveLength(1);
    // Channels are not keys; code the script never runs (a prelude's unused function) is not checked.
    expect(undeclaredKeys("local k = KEYS[1]\nredis.call('publish', k .. ':ch', 'm')")).toEqual([]);
    expect(undeclaredKeys("local function unused()\n  return redis.call('get', 'k')\nend\nreturn 1")).toEqual([]);
  });
});
