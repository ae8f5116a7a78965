import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

/**
 * The two blocks of a Linux process's own memory that the kernel wrote its arguments and its
 * environment into when it started: what /proc/<pid>/cmdline and /proc/<pid>/environ (and so
 * `ps`) show every process of its user, for as long as it runs. Deleting a variable from
 * process.env, or an argument from process.argv (a copy), changes neither. Without execve (Node
 * 22.15 has it; Wick supports 20) the only way to change what they show is to overwrite the
 * bytes in place, through /proc/self/mem, as setproctitle does in C and MySQL's client does with
 * a password on its command line.
 */
export type StartupBlock = 'cmdline' | 'environ';

/** Their bounds' field numbers in /proc/<pid>/stat (proc(5): arg_start … env_end). */
const FIELDS: Record<StartupBlock, readonly [number, number]> = {
  cmdline: [48, 49],
  environ: [50, 51],
};
/** Bounds a block whose fields are garbled, not one that is real: Linux caps both at 2 MiB or so. */
const MAX_BLOCK_BYTES = 64 << 20;

function blockBounds(block: StartupBlock): { start: number; length: number } {
  const stat = readFileSync('/proc/self/stat', 'latin1');
  // The command's name, in parentheses, may hold spaces and parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [first, last] = FIELDS[block].map((n) => Number(fields[n - 3]));
  if (
    !Number.isSafeInteger(first) ||
    !Number.isSafeInteger(last) ||
    (last as number) < (first as number) ||
    (last as number) - (first as number) > MAX_BLOCK_BYTES
  ) {
    throw new Error(
      `/proc/self/stat gives no ${block} bounds (fields ${FIELDS[block].join(', ')})`,
    );
  }
  return { start: first as number, length: (last as number) - (first as number) };
}

/**
 * Offers each NUL-ended entry of this process's start-up `block` to `rewrite`, and writes back
 * in place each replacement it returns (the same length: the entries' places cannot move). The
 * number of entries rewritten. Throws where it cannot (not Linux; /proc/self/mem not writable).
 *
 * An entry of the environment that the C library's environment still points at must not be
 * rewritten: set the variable again first (process.env[k] = v), which copies it elsewhere.
 */
export function rewriteStartupBlock(
  block: StartupBlock,
  rewrite: (entry: Buffer) => Buffer | undefined,
): number {
  const { start, length } = blockBounds(block);
  const fd = openSync('/proc/self/mem', 'r+');
  try {
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, start);
    let rewritten = 0;
    for (let at = 0; at < length; ) {
      const end = bytes.indexOf(0, at);
      const stop = end === -1 ? length : end;
      const entry = bytes.subarray(at, stop);
      const next = rewrite(entry);
      if (next !== undefined) {
        if (next.length !== entry.length) {
          throw new Error(`a ${block} entry's replacement must keep its ${entry.length} bytes`);
        }
        writeSync(fd, next, 0, next.length, start + at);
        rewritten++;
      }
      at = stop + 1;
    }
    return rewritten;
  } finally {
    closeSync(fd);
  }
}
