import type { Command } from 'commander';
import { allMasterStates, leaderState } from '../../client/masterConnection.js';
import { findWorker } from '../../client/workerLookup.js';
import { loadConf } from '../../conf/load.js';
import { uiClusterSecret } from '../../http/uiAuth.js';
import { LOGIN_LINK_TTL_MS, loginLink, MASTER_UI, workerUi } from '../../shared/uiLogin.js';
import { addConfOptions, masterUrlOf } from '../options.js';

interface Flags {
  master?: string;
  worker?: string;
  ui?: string;
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
      ),
  ).action(async (flags: Flags) => {
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    const secret = uiClusterSecret(conf);
    const base = flags.ui !== undefined ? checkUiUrl(flags.ui) : await advertised(flags, conf);
    if (secret === undefined) {
      process.stderr.write('Authentication is off: the web UI needs no login.\n');
      process.stdout.write(`${base}\n`);
      return;
    }
    // A link opens the one UI it is made for (shared/uiLogin.ts).
    const audience = flags.worker !== undefined ? workerUi(flags.worker) : MASTER_UI;
    process.stdout.write(`${loginLink(base, secret, Date.now(), undefined, audience)}\n`);
    process.stderr.write(
      `Open it within ${LOGIN_LINK_TTL_MS / 60_000} minutes; it logs one browser in, once.\n`,
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
