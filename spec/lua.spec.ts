import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

// lib/store/scripts/sources.ts is generated from lib/store/scripts/*.lua (npm run
// build): the committed copy must match the scripts it was made from, or the library
// would run stale Lua.

it('lib/store/scripts/sources.ts matches lib/store/scripts/*.lua', () => {
  const root = path.resolve(__dirname, '..');
  const fresh = execFileSync(process.execPath, ['--input-type=module', '-e', "import { render } from './scripts/embed-lua.mjs'; process.stdout.write(render());"], { cwd: root }).toString();
  expect(fs.readFileSync(path.join(root, 'lib', 'store', 'scripts', 'sources.ts'), 'utf8')).toBe(fresh);
});
