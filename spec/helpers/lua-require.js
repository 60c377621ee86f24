// Lets plain Node (node -r tsx/cjs, tsx scripts) load lib/lua/*.lua as strings, as
// tsup's text loader does in the build and spec/helpers/lua-transform.js under jest:
//   node -r ./spec/helpers/lua-require.js -r tsx/cjs lib/cli.ts ...
// or `import '../spec/helpers/lua-require.js'` before importing lib from a script.
const fs = require('node:fs');

if (!require.extensions['.lua']) {
  require.extensions['.lua'] = (module, filename) => {
    module.exports = { __esModule: true, default: fs.readFileSync(filename, 'utf8') };
  };
}
