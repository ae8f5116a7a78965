import type { Command } from 'commander';
import {
  allMasterStates,
  leaderState,
  type MasterStatus,
  masterState,
  withMaster,
} from '../../client/masterConnection.js';
import { loadConf } from '../../conf/load.js';
import type { WickConf } from '../../conf/WickConf.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { AppSummary, DriverSummary, MasterStateResponse } from '../../protocol/state.js';
import { parseMasterUrls } from '../../rpc/masterUrls.js';
import { sparkMasterJson } from '../../shared/sparkJson.js';
import { addConfOptions, addTokenOption, masterUrlOf } from '../options.js';
import { appFromEventLog, fromLogOnly, withJobsFromLog } from './appFromEventLog.js';

interface StatusFlags {
  master?: string;
  json?: boolean;
  conf: string[];
  propertiesFile?: string;
}

/** `wick status`: the master's state, for people or (--json) in the shape of Spark's /json. */
export function registerStatus(program: Command): void {
  addTokenOption(
    addConfOptions(
      program
        .command('status')
        .description(
          "Print the cluster's state: master, workers, applications, drivers (or one of them, by id)",
        )
        .argument(
          '[id]',
          "an application (app-…) or driver (driver-…) id: print only it, and why it waits; an application's jobs and stages from its event log (wick history)",
        )
        .option(
          '--master <url>',
          'master URL (default wick.master, $WICK_MASTER or wick://127.0.0.1:7077)',
        )
        .option('--json', "print JSON in the shape of Spark's master /json"),
    ),
  ).action(async (id: string | undefined, flags: StatusFlags) => {
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    await printStatus(id, masterUrlOf(flags.master, conf), flags.json === true, conf);
  });
}

/** Prints the cluster's state, or one application's or driver's (also `wick submit --status`). */
export async function printStatus(
  id: string | undefined,
  url: string,
  json: boolean,
  conf: WickConf,
): Promise<void> {
  if (id !== undefined) {
    process.stdout.write(await formatOneWithLog(id, url, json, conf));
    return;
  }
  let state: MessageOf<typeof MasterStateResponse>;
  let masters = '';
  if (parseMasterUrls(url).length > 1) {
    // Standby masters: every master's status, then the leader's view of the cluster.
    const statuses = await allMasterStates(url, conf);
    state = leaderState(statuses);
    masters = formatMasters(statuses);
  } else {
    state = await withMaster(url, (master) => masterState(master), conf);
  }
  process.stdout.write(
    json ? `${JSON.stringify(sparkMasterJson(state), null, 2)}\n` : masters + formatState(state),
  );
}

async function leaderOrOnly(url: string, conf: WickConf) {
  return parseMasterUrls(url).length > 1
    ? leaderState(await allMasterStates(url, conf))
    : await withMaster(url, (master) => masterState(master), conf);
}

/**
 * One application or driver: what the master says of it, and an application's jobs and stages
 * from its event log (appFromEventLog.ts) when one is there; the log alone when the master does
 * not know the application (it ended long ago, or the master restarted) or does not answer.
 */
async function formatOneWithLog(
  id: string,
  url: string,
  json: boolean,
  conf: WickConf,
): Promise<string> {
  let text: string | undefined;
  let masterError: Error | undefined;
  try {
    text = formatOne(await leaderOrOnly(url, conf), id, json);
  } catch (err) {
    masterError = err as Error;
  }
  const logged = await appFromEventLog(id, conf).catch((err: Error) => {
    process.stderr.write(`wick: the event logs cannot be read: ${err.message}\n`);
    return undefined;
  });
  if (!logged) {
    if (masterError) throw masterError;
    return text as string;
  }
  if (json) return text ?? `${JSON.stringify(logged, null, 2)}\n`;
  if (text !== undefined) return withJobsFromLog(text, logged);
  const why = /knows no application/.test(masterError?.message ?? '')
    ? `The master at ${url} no longer knows ${id}`
    : `The master at ${url} did not answer (${masterError?.message.split('\n')[0]})`;
  return fromLogOnly(why, logged);
}

/** One line per master: its URL and its state (ALIVE, STANDBY, …), or why it did not answer. */
export function formatMasters(statuses: readonly MasterStatus[]): string {
  const lines = [`Masters: ${statuses.length}`];
  for (const s of statuses) {
    lines.push(`  ${s.url}  ${s.state ? s.state.status : `UNREACHABLE (${s.error})`}`);
  }
  return `${lines.join('\n')}\n`;
}

export function formatState(s: MessageOf<typeof MasterStateResponse>, now = Date.now()): string {
  const alive = s.workers.filter((w) => w.state === 'ALIVE');
  const sum = (f: (w: (typeof alive)[number]) => number) => alive.reduce((n, w) => n + f(w), 0);
  const lines = [
    `Master ${s.url} (${s.status}), web UI ${s.webUiUrl}`,
    `Workers: ${alive.length} alive of ${s.workers.length}; cores ${sum((w) => w.coresUsed)}/${sum((w) => w.cores)} used; memory ${sum((w) => w.memoryUsed)}/${sum((w) => w.memory)} MiB used`,
  ];
  for (const w of s.workers) {
    lines.push(
      `  ${w.id}  ${w.host}:${w.port}  ${w.state}  cores ${w.coresUsed}/${w.cores}  memory ${w.memoryUsed}/${w.memory} MiB`,
    );
  }
  const apps = [...s.activeApps, ...s.completedApps];
  lines.push(`Applications: ${s.activeApps.length} active, ${s.completedApps.length} completed`);
  for (const a of apps) {
    const secs = Math.round(((a.endTime ?? now) - a.startTime) / 1000);
    const why = a.waitingReason
      ? ` — waiting: ${a.waitingReason}`
      : a.failure
        ? ` — ${failureLine(a.failure)}`
        : '';
    lines.push(`  ${a.id}  ${a.name}  ${a.state}  cores ${a.coresGranted}  ${secs}s${why}`);
  }
  const drivers = [...s.activeDrivers, ...s.completedDrivers];
  lines.push(`Drivers: ${s.activeDrivers.length} active, ${s.completedDrivers.length} completed`);
  for (const d of drivers) lines.push(`  ${driverLine(d)}`);
  return `${lines.join('\n')}\n`;
}

/** An application's failure in one line: its message's first line, and where it points. */
function failureLine(f: NonNullable<AppSummary['failure']>): string {
  const at = f.location ? ` (at ${f.location.file}:${f.location.line}:${f.location.column})` : '';
  return `${f.message.split('\n')[0]}${at}`;
}

/** One application or driver; an unknown id is an error that says what ids look like. */
export function formatOne(
  s: MessageOf<typeof MasterStateResponse>,
  id: string,
  json: boolean,
): string {
  const app = [...s.activeApps, ...s.completedApps].find((a) => a.id === id);
  const driver = [...s.activeDrivers, ...s.completedDrivers].find((d) => d.id === id);
  const found = app ?? driver;
  if (!found) {
    throw new Error(
      `The master at ${s.url} knows no application or driver "${id}" (ids look like app-20261130120000-0000 or driver-20261130120000-0000)`,
    );
  }
  if (json) return `${JSON.stringify(found, null, 2)}\n`;
  if (app) {
    const lines = [
      `${app.id}  ${app.name}  ${app.state}  cores ${app.coresGranted}  user ${app.user}`,
    ];
    if (app.waitingReason) lines.push(`  waiting: ${app.waitingReason}`);
    if (app.failure) {
      lines.push(`  failed: ${failureLine(app.failure)}`);
      const stack = app.failure.stack?.split('\n').filter((l) => /^\s+at /.test(l)) ?? [];
      lines.push(...stack.map((l) => `    ${l.trim()}`));
    }
    const failure = app.lastExecutorFailure;
    if (failure) {
      lines.push(
        `  last executor failure: executor ${failure.execId} on ${failure.workerHostPort} at ${new Date(failure.time).toISOString()}:`,
        ...failure.message.split('\n').map((l) => `    ${l}`),
      );
    }
    for (const e of [...app.executors, ...app.removedExecutors]) {
      lines.push(
        `  executor ${e.id} on ${e.workerHostPort}: ${e.state}${e.exitStatus !== undefined ? ` (exit ${e.exitStatus})` : ''}${e.message ? ` ${e.message}` : ''}`,
      );
    }
    return `${lines.join('\n')}\n`;
  }
  return `${driverLine(driver as DriverSummary)}\n`;
}

function driverLine(d: DriverSummary): string {
  const from = d.relaunchedFrom ? `  (relaunch of ${d.relaunchedFrom})` : '';
  return `${d.id}  ${d.state}  ${d.workerHostPort ?? '(not placed)'}${from}${d.exception ? `  ${d.exception}` : ''}`;
}
