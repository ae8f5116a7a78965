import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { RpcConf } from '../../conf/rpc.js';
import type { WickConf } from '../../conf/WickConf.js';
import { defaultSecretFile } from '../clusterSecret.js';
import { type Fingerprint, fingerprintOfPem } from './fingerprint.js';
import type { CertificateAndKey } from './selfSigned.js';

/**
 * The cluster's certificate: made by a master on its first start and kept with the cluster
 * secret (its folder: the default ~/.config/wick, or wick.authenticate.secret.file's), so that a
 * restart serves the same one and the fingerprint the join line carries stays true; a standby
 * master given a copy of the files serves it too. Its fingerprint is what peers pin.
 */
export interface ServedCertificate extends CertificateAndKey {
  readonly fingerprint: Fingerprint;
  /** Where it came from, for the log: a file, or "made at start". */
  readonly source: string;
}

/** Ten years: it is pinned, not checked against a CA, and a new one means a new join line. */
const CLUSTER_CERT_DAYS = 3650;

export function clusterCertificateFiles(conf: WickConf): { cert: string; key: string } {
  const secretFile = conf.get(RpcConf.authenticateSecretFile) || defaultSecretFile();
  const dir = dirname(secretFile);
  return { cert: join(dir, 'cluster-tls.crt'), key: join(dir, 'cluster-tls.key') };
}

/** The cluster's certificate when this machine has it (the master's), else undefined. */
export function readClusterCertificate(conf: WickConf): ServedCertificate | undefined {
  const files = clusterCertificateFiles(conf);
  const certPem = readIfThere(files.cert);
  if (certPem === undefined) return undefined;
  const keyPem = readIfThere(files.key);
  if (keyPem === undefined) return undefined;
  return { certPem, keyPem, fingerprint: fingerprintOfPem(certPem), source: files.cert };
}

/** Only the fingerprint, when this user can read the certificate (not its key): for pinning. */
export function localClusterFingerprint(conf: WickConf): Fingerprint | undefined {
  try {
    const pem = readIfThere(clusterCertificateFiles(conf).cert);
    return pem === undefined ? undefined : fingerprintOfPem(pem);
  } catch {
    return undefined;
  }
}

/**
 * The master's: the cluster's certificate, made now if there is none (key readable by this user
 * only, written before the certificate, both renamed into place so that a master starting at the
 * same time reads a whole pair or makes its own and one of the two wins).
 */
export async function ensureClusterCertificate(
  conf: WickConf,
  hosts: readonly string[],
): Promise<ServedCertificate & { generated?: boolean }> {
  const found = readClusterCertificate(conf);
  if (found) return found;
  const files = clusterCertificateFiles(conf);
  mkdirSync(dirname(files.cert), { recursive: true, mode: 0o700 });
  const { makeSelfSigned } = await import('./selfSigned.js');
  const made = await makeSelfSigned(
    `wick cluster ${os.hostname()}`,
    ['localhost', '127.0.0.1', '::1', os.hostname(), ...hosts],
    CLUSTER_CERT_DAYS,
  );
  const tmp = `.${process.pid}.${Date.now()}`;
  writeFileSync(files.key + tmp, made.keyPem, { mode: 0o600, flag: 'wx' });
  writeFileSync(files.cert + tmp, made.certPem, { mode: 0o644, flag: 'wx' });
  renameSync(files.key + tmp, files.key);
  renameSync(files.cert + tmp, files.cert);
  return {
    ...made,
    fingerprint: fingerprintOfPem(made.certPem),
    source: files.cert,
    generated: true,
  };
}

/** A certificate and key from wick.ssl.certFile / wick.ssl.keyFile, checked to be a pair. */
export function readConfiguredCertificate(
  certFile: string,
  keyFile: string,
): ServedCertificate | undefined {
  if (certFile === '' && keyFile === '') return undefined;
  if (certFile === '' || keyFile === '') {
    throw new Error(
      `wick.ssl.certFile and wick.ssl.keyFile go together: set both (got certFile=${JSON.stringify(certFile)}, keyFile=${JSON.stringify(keyFile)})`,
    );
  }
  const certPem = readIfThere(certFile);
  const keyPem = readIfThere(keyFile);
  if (certPem === undefined) throw new Error(`wick.ssl.certFile ${certFile} does not exist`);
  if (keyPem === undefined) throw new Error(`wick.ssl.keyFile ${keyFile} does not exist`);
  let fingerprint: Fingerprint;
  try {
    fingerprint = fingerprintOfPem(certPem);
  } catch (err) {
    throw new Error(
      `wick.ssl.certFile ${certFile} is not a PEM certificate: ${(err as Error).message}`,
    );
  }
  return { certPem, keyPem, fingerprint, source: certFile };
}

function readIfThere(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a file`);
    if (st.size > 1024 * 1024) throw new Error(`${path} is larger than 1 MiB: not a PEM file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
