// dist/wick.cjs: the path every launcher knows (bin/wick.js, workers' executor commands, the
// extension's agent). The CLI itself is ES module chunks in dist/cli/, loaded from here.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import(pathToFileURL(join(__dirname, 'cli', 'main.mjs')).href).catch((err: Error) => {
  console.error(`wick: cannot load ${join(__dirname, 'cli', 'main.mjs')}: ${err.message}`);
  process.exit(1);
});
