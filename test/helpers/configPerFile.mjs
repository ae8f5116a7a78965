// Loaded (--import, by scripts/test.mjs) into every test file's process: a config folder of its
// own, so that the cluster secret a master of one file makes (its default secret file) is found
// by that file's processes and nobody else's, whatever order the files run in.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.XDG_CONFIG_HOME = mkdtempSync(join(process.env.XDG_CACHE_HOME || tmpdir(), 'config-'));
