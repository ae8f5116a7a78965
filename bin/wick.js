#!/usr/bin/env node
// CommonJS (bin/package.json): an ES module entry would start Node's ES module loader first,
// about 9 ms of every command's start-up here.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const bundle = join(__dirname, '..', 'dist', 'wick.cjs');
if (!existsSync(bundle)) {
  console.error('wick is not built yet: run `npm run build` in the Wick folder first.');
  process.exit(1);
}
require(bundle);
