/**
 * An application whose job waits at a gate: its tasks run (so its executors and driver are alive
 * and busy, with task ids a forger can name) until the test opens the gate, then the job ends
 * with an answer the test knows exactly. The security tests attack it while it waits.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppDir } from './apps.js';

/** The squares of 1…6 in 2 partitions: the job's answer, when nobody changed it. */
export const GATED_ANSWER = 'squares [1,4,9,16,25,36]';

const SOURCE = `
import { WickContext } from 'wick';
const [gate, name] = process.argv.slice(2);
const wc = await WickContext.create({ appName: name });
const squares = await wc
  .parallelize([1, 2, 3, 4, 5, 6], 2)
  .map(
    (x, env) => {
      // Blocks this task's thread (without using the CPU) until the gate file appears.
      const { existsSync } = require('node:fs');
      const pause = new Int32Array(new SharedArrayBuffer(4));
      while (!existsSync(env.gate)) Atomics.wait(pause, 0, 0, 25);
      return x * x;
    },
    { gate },
  )
  .collect();
console.log('squares ' + JSON.stringify(squares));
await wc.stop();
`;

/** One gated application: its file, its gate, and the arguments that submit it. */
export class GatedApp {
  readonly file: string;
  readonly gate: string;

  constructor(
    dir: AppDir,
    readonly name: string,
  ) {
    this.file = dir.write(`${name}.mjs`, SOURCE);
    this.gate = join(dir.path, `${name}.gate`);
    rmSync(this.gate, { force: true });
  }

  /** The application and its arguments, for the end of a `wick submit` command line. */
  get args(): string[] {
    return [this.file, this.gate, this.name];
  }

  /** Lets its tasks finish. */
  open(): void {
    writeFileSync(this.gate, '');
  }
}

/** Checks that a driver's output holds the exact answer, once. */
export function assertExactAnswer(stdout: string): void {
  const lines = stdout.split('\n').filter((l) => l.startsWith('squares '));
  assert.deepEqual(lines, [GATED_ANSWER], stdout);
}
