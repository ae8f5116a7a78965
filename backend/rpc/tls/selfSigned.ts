// tsyringe, under @peculiar/x509, needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

/**
 * A self-signed certificate and its key, made here: Node can use X.509 certificates but has no
 * API to make one, so @peculiar/x509 (WebCrypto-based, maintained by Peculiar Ventures, the
 * PKI.js authors) builds it. ECDSA P-256: a key and a certificate take a few milliseconds, so a
 * driver or an executor can make its own at start; browsers and every TLS 1.3 stack accept it.
 * Peers pin its fingerprint (or the handshake proves whoever serves it): no CA signs it.
 */
export interface CertificateAndKey {
  readonly certPem: string;
  readonly keyPem: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export async function makeSelfSigned(
  commonName: string,
  hosts: readonly string[],
  validDays: number,
): Promise<CertificateAndKey> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const names = [...new Set(hosts.filter((h) => h !== ''))].map((h) =>
    isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h },
  );
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex'),
    // A name of letters, digits, spaces and dashes: no escaping needed in a distinguished name.
    name: `CN=${commonName.replace(/[^A-Za-z0-9 .-]/g, '-').slice(0, 64)}`,
    // An hour back: a peer whose clock is a little behind still accepts it.
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + validDays * 86_400_000),
    signingAlgorithm: ALGORITHM,
    keys: keys as unknown as Parameters<
      typeof x509.X509CertificateGenerator.createSelfSigned
    >[0]['keys'],
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ format: 'pem', type: 'pkcs8' })
    .toString();
  return { certPem: cert.toString('pem'), keyPem };
}
