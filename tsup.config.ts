import { defineConfig } from 'tsup';

// ESM and CommonJS builds with their own .d.ts; the Lua scripts are inlined as text,
// so the package needs no file lookups at run time.
// The bin (`holdfast`, lib/cli.ts) is a second build: CommonJS only, no types, with a
// shebang. Both builds share dist/, so the library build's clean spares the bin's files.
export default defineConfig([
  {
    entry: { index: 'lib/index.ts' },
    format: ['cjs', 'esm'],
    dts: true,
    clean: ['!cli.js', '!cli.js.map'],
    sourcemap: true,
    target: 'node18',
    loader: { '.lua': 'text' },
    outDir: 'dist',
  },
  {
    entry: { cli: 'lib/cli.ts' },
    format: ['cjs'],
    dts: false,
    clean: false,
    sourcemap: true,
    target: 'node18',
    loader: { '.lua': 'text' },
    outDir: 'dist',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
