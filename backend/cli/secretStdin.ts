/** Longer than any secret clusterSecret.ts accepts (1,024 characters). */
const MAX_BYTES = 2048;

/**
 * `--secret-stdin`: the first line of stdin, which `wick start-workers` writes into ssh's stdin,
 * so that the secret crosses to the worker's machine on no command line.
 */
export async function readSecretStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const b = chunk as Buffer;
    size += b.length;
    chunks.push(b);
    if (b.includes(10) || size > MAX_BYTES) break;
  }
  process.stdin.destroy();
  const text = Buffer.concat(chunks).toString('utf8');
  if (size > MAX_BYTES && !text.slice(0, MAX_BYTES).includes('\n')) {
    throw new Error(`--secret-stdin: the first line of stdin is longer than ${MAX_BYTES} bytes`);
  }
  const line = text.split('\n')[0]?.trim() ?? '';
  if (line === '')
    throw new Error('--secret-stdin: stdin holds no secret (its first line is empty)');
  return line;
}
