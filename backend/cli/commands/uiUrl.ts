import type { Command } from 'commander';
import { allMasterStates, leaderState } from '../../client/masterConnection.js';
import { findWorker } from '../../client/workerLookup.js';
import { loadConf } from '../../conf/load.js';
import { SslConf } from '../../conf/ssl.js';
import { uiClusterSecret } from '../../http/uiAuth.js';
import { localClusterFingerprint } from '../../rpc/tls/clusterCertificate.js';
import { parseFingerprints } from '../../rpc/tls/fingerprint.js';
import { TLS_FINGERPRINT_ENV } from '../../rpc/tls/WireSecurity.js';
import { metricsScrapeToken } from '../../shared/metricsToken.js';
import { LOGIN_LINK_TTL_MS, loginLink, MASTER_UI, workerUi } from '../../shared/uiLogin.js';
import { addConfOptions, masterUrlOf } from '../options.js';

interface Flags {
  master?: string;
  worker?: string;
  ui?: string;
  metricsToken?: boolean;
  conf: string[];
  propertiesFile?: string;
}

/**
 * `wick ui-url`: the web UI's address, and, when the cluster authenticates, a one-time login link
 * for it, made here from the cluster secret (found as every process finds it), so that nothing
 * but a holder of the secret can make one and no server is asked for one.
 */
export function registerUiUrl(program: Command): void {
  addConfOptions(
    program
      .command('ui-url')
      .description(
        "Print the master's web UI address (or a worker's), as a one-time login link when the cluster authenticates",
      )
      .option(
        '--master <url>',
        'master URL (default wick.master, $WICK_MASTER or wick://127.0.0.1:7077)',
      )
      .option('--worker <id>', "a worker's own web UI instead of the master's")
      .option(
        '--ui <http-url>',
        'the web UI at this address (e.g. a tunnel to it) instead of the one the master advertises; no master is asked',
      )
      .option(
        '--metrics-token',
        "print the token that lets Prometheus scrape every web UI's /metrics/prometheus and read nothing else (no master is asked)",
      ),
  ).action(async (flags: Flags) => {
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    const secret = uiClusterSecret(conf);
    if (flags.metricsToken) {
      if (secret === undefined) {
        throw new Error('Authentication is off: /metrics/prometheus needs no token');
      }
      process.stdout.write(`${metricsScrapeToken(secret)}\n`);
      return;
    }
    const base = flags.ui !== undefined ? checkUiUrl(flags.ui) : await advertised(flags, conf);
    if (secret === undefined) {
      process.stderr.write('Authentication is off: the web UI needs no login.\n');
      process.stdout.write(`${base}\n`);
      return;
    }
    const fingerprint = base.startsWith('https:') ? uiFingerprint(conf, flags) : undefined;
    // A link opens the one UI it is made for (shared/uiLogin.ts).
    const audience = flags.worker !== undefined ? workerUi(flags.worker) : MASTER_UI;
    const link = new URL(loginLink(base, secret, Date.now(), undefined, audience));
    // Not read by the server: the certificate to expect, for a browser's user or a script to check.
    if (fingerprint) link.searchParams.set('fingerprint', fingerprint);
    process.stdout.write(`${link}\n`);
    process.stderr.write(
      `Open it within ${LOGIN_LINK_TTL_MS / 60_000} minutes; it logs one browser in, once.${fingerprint ? ` The UI's certificate is self-signed: check that the browser shows SHA-256 ${fingerprint} before you accept it.` : ''}\n`,
    );
  });
}

/** The web UI address the master advertises: its own, or (--worker) that worker's. */
async function advertised(flags: Flags, conf: ReturnType<typeof loadConf>): Promise<string> {
  const state = leaderState(await allMasterStates(masterUrlOf(flags.master, conf), conf));
  if (flags.worker === undefined) return state.webUiUrl;
  const w = findWorker(state, flags.worker);
  if (!/^https?:\/\//.test(w.webUiAddress)) {
    throw new Error(
      `Worker ${w.id} advertises no web UI address (${JSON.stringify(w.webUiAddress)}); read its pages through the master: ${state.webUiUrl}/proxy/${w.id}/`,
    );
  }
  return w.webUiAddress;
}

function checkUiUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    url = new URL('invalid:');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(
      `Invalid --ui ${JSON.stringify(text)}: expected the web UI's address, such as http://127.0.0.1:8080`,
    );
  }
  return url.origin;
}

/**
 * The certificate a master's https UI serves, when known here: the pinned one (wick.ssl.fingerprint,
 * WICK_TLS_FINGERPRINT), or the cluster's on the master's machine. A worker's own UI serves the
 * certificate the worker made at start, which only its log names: none is given for it.
 */
function uiFingerprint(conf: ReturnType<typeof loadConf>, flags: Flags): string | undefined {
  if (flags.worker !== undefined) return undefined;
  const pinned = [
    ...parseFingerprints(conf.get(SslConf.fingerprint), SslConf.fingerprint.key),
    ...parseFingerprints(process.env[TLS_FINGERPRINT_ENV] ?? '', TLS_FINGERPRINT_ENV),
  ];
  return pinned[0] ?? localClusterFingerprint(conf);
}
