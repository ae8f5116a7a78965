#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const bundle = new URL('../dist/wick.cjs', import.meta.url);
if (!existsSync(bundle)) {
  console.error('wick is not built yet: run `npm run build` in the Wick folder first.');
  process.exit(1);
}
createRequire(import.meta.url)(bundle.pathname);
