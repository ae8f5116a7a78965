import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The challenge–response of `wick.authenticate` (Spark's spark.authenticate): both sides prove
 * they know the shared secret by an HMAC-SHA256 over two fresh nonces, so the secret itself never
 * crosses the wire and a recorded exchange cannot be replayed. Each proof is bound to its role,
 * so a server's proof cannot be reflected back as a client's. Over TLS each proof also covers the
 * server certificate's fingerprint (`binding`, RFC 5929's tls-server-end-point), so that a machine
 * in between, which must serve a certificate of its own, cannot pass a proof from one side on to
 * the other: the two sides would each have proved a different certificate.
 */
export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

export function serverProof(
  secret: string,
  clientNonce: string,
  challenge: string,
  binding?: string,
): string {
  return hmac(secret, `wick-server:${clientNonce}:${challenge}${bound(binding)}`);
}

export function clientProof(
  secret: string,
  clientNonce: string,
  challenge: string,
  binding?: string,
): string {
  return hmac(secret, `wick-client:${challenge}:${clientNonce}${bound(binding)}`);
}

/** Nothing on a plain connection (the proofs are as they always were), `:sha256:…` over TLS. */
function bound(binding: string | undefined): string {
  return binding === undefined ? '' : `:${binding}`;
}

export function proofsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

function hmac(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}
