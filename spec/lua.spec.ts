import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import * as shared from '../lib/store/scripts/sources';
import * as lock from '../lib/primitives/lock/sources';
import * as multi from '../lib/primitives/multi/sources';
import * as semaphore from '../lib/primitives/semaphore/sources';
import * as readWrite from '../lib/primitives/read-write/sources';
import { undeclaredKeys } from './helpers/lua-keys';

// Each folder's sources.ts is generated from the .lua files beside it (npm run build):
// the committed copies must match the scripts they were made from, or the library
// would run stale Lua. And every script, preludes included, touches only keys it was
// passed in KEYS (spec/helpers/lua-keys.ts).

it('every sources.ts matches the .lua files of its folder', () => {
  const root = path.resolve(__dirname, '..');
  const fresh = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', "import { renderAll } from './scripts/embed-lua.mjs'; process.stdout.write(JSON.stringify([...renderAll()]));"], { cwd: root }).toString(),
  ) as [string, string][];
  expect(fresh.map(([file]) => path.relative(root, file)).sort()).toEqual(['lib/primitives/lock/sources.ts', 'lib/primitives/multi/sources.ts', 'lib/primitives/read-write/sources.ts', 'lib/primitives/semaphore/sources.ts', 'lib/store/scripts/sources.ts']);
  for (const [file, text] of fresh) expect({ file: path.relative(root, file), text: fs.readFileSync(file, 'utf8') }).toEqual({ file: path.relative(root, file), text });
});

describe('every key a script touches is passed in KEYS (Dragonfly refuses others; Cluster routes by KEYS)', () => {
  // Every folder's scripts (lua.spec's first case checks that these are all the folders).
  it.each(Object.entries({ ...shared, ...lock, ...multi, ...semaphore, ...readWrite }))('%s', (_, source) => {
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
