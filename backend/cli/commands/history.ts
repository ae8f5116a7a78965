import { hostname } from 'node:os';
import { type Command, Option } from 'commander';
import { HistoryConf } from '../../conf/history.js';
import { loadConf } from '../../conf/load.js';
import { RpcConf } from '../../conf/rpc.js';
import type { WickConf } from '../../conf/WickConf.js';
import { applicationInfoJson } from '../../history/applicationInfoJson.js';
import { HistoryProvider } from '../../history/HistoryProvider.js';
import { HistoryServerUI } from '../../http/HistoryServerUI.js';
import { getLogger } from '../../util/log.js';
import { version } from '../../util/version.js';
import { addConfOptions, exitWithParent, onSignals } from '../options.js';
import { applySecretFd } from '../secretFromFd.js';
import { formatAppHistory, formatHistoryList } from './historyFormat.js';

const log = getLogger('HistoryServer');

interface HistoryFlags {
  dir?: string;
  json?: boolean;
  conf: string[];
  propertiesFile?: string;
}

interface ServerFlags extends HistoryFlags {
  host?: string;
  port?: string;
  printReady?: boolean;
  exitWithParent?: boolean;
  secretFd?: string;
}

function historyConf(
  flags: HistoryFlags,
  more: { flag: string; key: string; value: string | undefined }[] = [],
): WickConf {
  return loadConf({
    confPairs: flags.conf,
    propertiesFile: flags.propertiesFile,
    flags: [{ flag: '--dir', key: HistoryConf.logDirectory.key, value: flags.dir }, ...more],
  });
}

/** The warnings of a command that reads logs: each on stderr, as one line. */
function warnOnStderr(message: string): void {
  process.stderr.write(`wick: ${message}\n`);
}

/** `wick history` and `wick history-server`: logged applications, in a terminal or over HTTP. */
export function registerHistory(program: Command): void {
  addConfOptions(
    program
      .command('history')
      .description(
        "List the applications of an event log folder (default: where drivers write them), or print one application's jobs and stages",
      )
      .argument('[app-id]', "an application's id: print its jobs and stages")
      .option(
        '--dir <dir>',
        'the event log folder (default wick.history.fs.logDirectory, else wick.eventLog.dir, else $XDG_STATE_HOME/wick/event-logs)',
      )
      .option(
        '--json',
        "print Spark's /api/v1/applications JSON (or, with an id, the jobs and stages as JSON)",
      ),
  ).action(async (appId: string | undefined, flags: HistoryFlags) => {
    const conf = historyConf(flags);
    const provider = HistoryProvider.fromConf(conf, { warn: warnOnStderr });
    await provider.scan();
    if (appId !== undefined) {
      const loaded = await provider.load(appId);
      if (!loaded) throw new Error(noSuchApp(provider, appId));
      process.stdout.write(
        flags.json ? `${JSON.stringify(loaded, null, 2)}\n` : formatAppHistory(loaded),
      );
      return;
    }
    const apps = provider.applications();
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify(
          apps.map((a) => applicationInfoJson(a, version)),
          null,
          2,
        )}\n`,
      );
      return;
    }
    const rows = [];
    for (const a of apps)
      rows.push({ listing: a, summary: (await provider.load(a.appId))?.summary });
    process.stdout.write(formatHistoryList(provider.logDir, rows));
  });

  addConfOptions(
    program
      .command('history-server')
      .description(
        "Run a history server (Spark's, on port 18080): the dashboard's pages and Spark's /api/v1 over an event log folder, behind the cluster's login",
      )
      .option(
        '--host <host>',
        'address to bind (default wick.history.ui.host, else this machine’s name)',
      )
      .option('--port <port>', 'port (default wick.history.ui.port, 18080; 0 picks a free one)')
      .option(
        '--dir <dir>',
        'the event log folder (default wick.history.fs.logDirectory, else wick.eventLog.dir, else $XDG_STATE_HOME/wick/event-logs)',
      ),
  )
    .option(
      '--print-ready',
      'once serving, print one JSON line {"url", "logDir"} on stdout (logs go to stderr): for scripts and tests',
    )
    .addOption(new Option('--exit-with-parent', 'stop when stdin closes').hideHelp())
    .addOption(
      new Option('--secret-fd <n>', 'read the cluster secret from this file descriptor').hideHelp(),
    )
    .action(async (flags: ServerFlags) => {
      const conf = historyConf(flags, [
        { flag: '--host', key: HistoryConf.uiHost.key, value: flags.host },
        { flag: '--port', key: HistoryConf.uiPort.key, value: flags.port },
      ]);
      // From `wick start-history-server`, which hands the secret over a pipe (its login's key).
      await applySecretFd(conf, flags.secretFd);
      const provider = HistoryProvider.fromConf(conf, { warn: (m) => log.warn(m) });
      await provider.start();
      const host = conf.get(HistoryConf.uiHost) || hostname();
      let ui: HistoryServerUI;
      try {
        ui = await HistoryServerUI.start(
          provider,
          host,
          conf.get(HistoryConf.uiPort),
          conf.get(RpcConf.portMaxRetries),
          conf,
        );
      } catch (err) {
        provider.stop();
        throw err;
      }
      log.info(
        `Listing the event logs of ${provider.logDir} (${provider.applications().length} application(s)), looking again every ${conf.get(HistoryConf.updateInterval)} ms`,
      );
      const stop = async () => {
        provider.stop();
        await ui.stop();
      };
      onSignals(stop);
      if (flags.exitWithParent) exitWithParent(() => stop().then(() => process.exit(0)));
      if (flags.printReady) {
        process.stdout.write(`${JSON.stringify({ url: ui.url, logDir: provider.logDir })}\n`);
      }
    });
}

/** No log of `appId`: say where was looked and what is there. */
export function noSuchApp(provider: HistoryProvider, appId: string): string {
  const ids = provider.applications().map((a) => a.appId);
  const some = ids.slice(0, 5).join(', ');
  return `No event log of application "${appId}" in ${provider.logDir} (${ids.length === 0 ? 'it has none' : `it has ${ids.length}: ${some}${ids.length > 5 ? ', …' : ''}`}); ids look like app-20261130120000-0000`;
}
