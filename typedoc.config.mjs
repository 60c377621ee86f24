// TypeDoc: the API reference in docs/api (`npm run docs`), checked by `npm run docs:check`
// (scripts/docs-check.mjs, part of `npm test`): a warning (an undocumented export, a
// broken {@link}) fails it, and so does a docs/api that no longer matches the sources.
//
// The entry points are the package's public subpaths, read from package.json "exports"
// and mapped from the build back to their sources (./dist/cjs/X.js -> lib/X.ts): a new
// subpath (./otel) is documented as soon as it is exported. Give its entry file a
// `@module holdfast/<subpath>` comment so that its page is named after the import path.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Every string in an "exports" target (conditions nest). */
const targets = (value) => (typeof value === 'string' ? [value] : Object.values(value ?? {}).flatMap(targets));

const entryPoints = Object.entries(pkg.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(([subpath, target]) => {
    const built = targets(target).map((t) => /^\.\/dist\/cjs\/(.+?)(?:\.d\.ts|\.js)$/.exec(t)).find(Boolean);
    if (!built) throw new Error(`typedoc.config.mjs: package.json exports['${subpath}'] has no ./dist/cjs target to map back to lib/`);
    const source = path.join('lib', `${built[1]}.ts`);
    if (!fs.existsSync(path.join(root, source))) throw new Error(`typedoc.config.mjs: exports['${subpath}'] maps to ${source}, which does not exist`);
    return source;
  });

/** @type {Partial<import('typedoc').TypeDocOptions & import('typedoc-plugin-markdown').PluginOptions>} */
export default {
  entryPoints,
  // The published declarations' view: @internal is left out as stripInternal does.
  tsconfig: 'tsconfig.build.json',
  name: pkg.name,
  out: 'docs/api',
  // Markdown: small, reviewable in a diff, readable on the repository's web page.
  plugin: ['typedoc-plugin-markdown'],
  readme: 'none',
  // No "Defined in file:line": it would change the reference with every code edit.
  disableSources: true,
  excludePrivate: true,
  excludeProtected: true,
  excludeInternal: true,
  // What the check is for.
  treatWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, invalidPath: true, rewrittenLink: true, notDocumented: true, unusedMergeModuleWith: true },
  // Markdown layout.
  hidePageHeader: true,
  hideBreadcrumbs: true,
  useCodeBlocks: true,
  parametersFormat: 'table',
  interfacePropertiesFormat: 'table',
  classPropertiesFormat: 'table',
  typeDeclarationFormat: 'table',
};
