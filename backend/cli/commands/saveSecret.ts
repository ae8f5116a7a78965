import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { defaultSecretFile } from '../../rpc/clusterSecret.js';

/** What a generated secret has; a shorter one is refused by every Wick process (clusterSecret.ts). */
const MIN = 16;
const MAX = 1024;

/**
 * `wick join --save`: the secret from stdin (a prompt on a terminal, without echo) into this
 * user's default secret file, made readable by this user only. Nothing goes on a command line,
 * into an environment or into shell history; `wick worker` then finds it by itself.
 */
export async function saveSecretFromStdin(
  input: NodeJS.ReadableStream = process.stdin,
  file = defaultSecretFile(),
): Promise<string> {
  const tty = (input as { isTTY?: boolean }).isTTY === true;
  if (tty) process.stderr.write('Cluster secret (not shown): ');
  const rl = createInterface({ input, terminal: false });
  const muted = tty ? muteEcho(input) : () => {};
  let line: string | undefined;
  try {
    for await (const l of rl) {
      line = l;
      break;
    }
  } finally {
    muted();
    rl.close();
    if (tty) process.stderr.write('\n');
  }
  const secret = (line ?? '').trim();
  if (secret.length < MIN || secret.length > MAX) {
    throw new Error(
      `The secret read from stdin has ${secret.length} characters; expected ${MIN} to ${MAX} (the master printed it on its first start; \`wick join\` where the master runs prints it again)`,
    );
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  // An existing file keeps its mode through writeFileSync.
  chmodSync(file, 0o600);
  process.stderr.write(`Saved the cluster secret in ${file} (readable by this user only).\n`);
  return file;
}

/** Turns a terminal's echo off while the secret is typed; returns what turns it back on. */
function muteEcho(input: NodeJS.ReadableStream): () => void {
  const stream = input as { setRawMode?: (on: boolean) => void };
  if (typeof stream.setRawMode !== 'function') return () => {};
  // Raw mode would also swallow Enter's line discipline; readline with terminal:false still
  // splits lines on \r, which a raw terminal sends.
  stream.setRawMode(true);
  return () => stream.setRawMode?.(false);
}
