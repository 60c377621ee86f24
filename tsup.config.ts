import { defineConfig } from 'tsup';

// ESM and CommonJS builds with their own .d.ts; the Lua scripts are inlined as text,
// so the package needs no file lookups at run time.
export default defineConfig({
  entry: { index: 'lib/index.ts' },
  format: ['cjs', 'esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node18',
  loader: { '.lua': 'text' },
  outDir: 'dist',
});
