import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

// Each folder's sources.ts is generated from the .lua files beside it (npm run build):
// the committed copies must match the scripts they were made from, or the library
// would run stale Lua.

it('every sources.ts matches the .lua files of its folder', () => {
  const root = path.resolve(__dirname, '..');
  const fresh = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', "import { renderAll } from './scripts/embed-lua.mjs'; process.stdout.write(JSON.stringify([...renderAll()]));"], { cwd: root }).toString(),
  ) as [string, string][];
  expect(fresh.length).toBeGreaterThanOrEqual(4);
  for (const [file, text] of fresh) expect({ file: path.relative(root, file), text: fs.readFileSync(file, 'utf8') }).toEqual({ file: path.relative(root, file), text });
});
