#!/usr/bin/env node
// Builds wick.vsix: the production bundles in dist/ plus the only runtime dependencies the backend
// bundle keeps external (piscina, whose threads load its own files; esbuild, whose binary
// `wick submit` runs), staged in build/vsix so that vsce packs exactly those.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const stage = 'build/vsix';
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
execFileSync(process.execPath, ['scripts/build.mjs', '--production', '--outdir', `${stage}/dist`], {
  stdio: 'inherit',
});
// Only what the extension and the backend need at run time; not the e2e suite.
rmSync(join(stage, 'dist', 'e2e'), { recursive: true, force: true });
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const keep = ['piscina', 'esbuild'];
pkg.dependencies = Object.fromEntries(keep.map((k) => [k, pkg.dependencies[k]]));
delete pkg.devDependencies;
delete pkg.scripts;
delete pkg.exports;
delete pkg.bin;
writeFileSync(join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
// The Marketplace page is the users' README, not the developers' (the repository's).
cpSync('extension/README.md', join(stage, 'README.md'));
if (existsSync('LICENSE')) cpSync('LICENSE', join(stage, 'LICENSE'));
// The icon and the walkthrough's pages (package.json names them).
cpSync('media', join(stage, 'media'), { recursive: true });
const modules = [...keep, `@esbuild/${process.platform}-${process.arch}`];
for (const m of modules)
  if (existsSync(join('node_modules', m)))
    cpSync(join('node_modules', m), join(stage, 'node_modules', m), { recursive: true });
writeFileSync(
  join(stage, '.vscodeignore'),
  '**/*.map\n**/*.md\n!README.md\n!media/**\nnode_modules/piscina/{test,test-jest,benchmark,src,docs}/**\n',
);
execFileSync(
  join(process.cwd(), 'node_modules/.bin/vsce'),
  [
    'package',
    '--allow-missing-repository',
    '--skip-license',
    '--no-rewrite-relative-links',
    '-o',
    '../../wick.vsix',
  ],
  { cwd: stage, stdio: 'inherit' },
);
