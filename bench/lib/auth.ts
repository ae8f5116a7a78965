/**
 * Benchmarks run with authentication on, as a cluster does by default, and their simulated peers
 * take the roles real ones take: a mock master or simulated worker holds the cluster secret and
 * proves it at the handshake, as the real daemons do (docs/protocol.md, "Who may do what").
 *
 * A run makes one fresh secret and puts it in WICK_AUTH_SECRET, where every Wick process looks
 * before the default secret file (backend/rpc/clusterSecret.ts): the masters, workers and
 * simulators a benchmark starts inherit it, and nothing is written to the user's secret file. A
 * secret already in WICK_AUTH_SECRET is kept.
 */
import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import { clientProof, newNonce, proofsEqual, serverProof } from '../../backend/rpc/auth.js';

/** The cluster secret of this run (made and put in WICK_AUTH_SECRET on first use). */
export function benchClusterSecret(): string {
  if (!process.env.WICK_AUTH_SECRET) {
    process.env.WICK_AUTH_SECRET = randomBytes(24).toString('base64url');
  }
  return process.env.WICK_AUTH_SECRET;
}

/**
 * The dialling side of Wick's handshake on a bare socket (`wick.hello`, then `wick.auth` with the
 * secret's proof), for benchmarks that write frames by hand. Without a secret it says hello alone,
 * as an open peer does. Rejects if the server refuses or fails to prove the secret. The socket's
 * data listener is removed once it resolves.
 */
export function rawHandshake(
  socket: net.Socket,
  from: string,
  secret: string | undefined,
): Promise<void> {
  const nonce = secret === undefined ? undefined : newNonce();
  return new Promise<void>((resolve, reject) => {
    let text = '';
    const write = (id: number, method: string, params: object) =>
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const done = (err?: Error) => {
      socket.off('data', onData);
      socket.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const onFrame = (f: {
      id?: number;
      result?: { challenge?: string; proof?: string };
      error?: { message?: string };
    }) => {
      if (f.error) return done(new Error(`handshake refused: ${f.error.message}`));
      if (f.id === 2 || secret === undefined || nonce === undefined) return done();
      const { challenge, proof } = f.result ?? {};
      if (!challenge || !proof || !proofsEqual(proof, serverProof(secret, nonce, challenge))) {
        return done(new Error('the server did not prove the cluster secret'));
      }
      write(2, 'wick.auth', { proof: clientProof(secret, nonce, challenge) });
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n')) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        onFrame(JSON.parse(line));
      }
    };
    socket.on('data', onData);
    socket.once('error', done);
    write(1, 'wick.hello', nonce ? { version: 1, from, nonce } : { version: 1, from });
  });
}
