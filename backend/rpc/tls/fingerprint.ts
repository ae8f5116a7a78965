import { createHash, X509Certificate } from 'node:crypto';

/**
 * A certificate's fingerprint as Wick prints and pins it: `sha256:` and the SHA-256 of its DER
 * bytes in lowercase hex, the form of kubeadm's --discovery-token-ca-cert-hash. The colon-separated
 * uppercase form that browsers and `openssl x509 -fingerprint -sha256` show is read too.
 */
export type Fingerprint = `sha256:${string}`;

export function fingerprintOfDer(der: Uint8Array): Fingerprint {
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

export function fingerprintOfPem(pem: string): Fingerprint {
  return fingerprintOfDer(new X509Certificate(pem).raw);
}

/** One fingerprint from text, or an error naming the text, where it came from and the form. */
export function parseFingerprint(text: string, source: string): Fingerprint {
  const t = text.trim();
  const hex = /^sha256:([0-9a-fA-F]{64})$/.exec(t)?.[1] ?? colonHex(t);
  if (hex === undefined) {
    throw new Error(
      `Invalid certificate fingerprint ${JSON.stringify(t.slice(0, 120))} from ${source}: expected sha256:<64 hex digits>, as \`wick join\` prints it (or the colon-separated SHA-256 a browser shows)`,
    );
  }
  return `sha256:${hex.toLowerCase()}`;
}

/** Several, comma-separated (standby masters with certificates of their own). */
export function parseFingerprints(text: string, source: string): Fingerprint[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .slice(0, 16)
    .map((s) => parseFingerprint(s, source));
}

function colonHex(t: string): string | undefined {
  return /^([0-9a-fA-F]{2}:){31}[0-9a-fA-F]{2}$/.test(t) ? t.replaceAll(':', '') : undefined;
}
