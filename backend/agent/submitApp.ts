import { closeSync, openSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import type { MasterStateMirror } from '../client/MasterStateMirror.js';
import { parseMemoryMB } from '../conf/daemon.js';
import { RequestSubmitDriver } from '../protocol/client.js';
import type { FileRef } from '../protocol/files.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { bundleApp } from '../submit/bundle.js';
import { driverDescription } from '../submit/driverDescription.js';
import { uploadToMasters } from '../submit/uploadApp.js';
import { firstLine } from '../util/firstLine.js';
import type { MasterState, SubmitParams } from './protocol.js';

interface Ctx {
  master: RpcEndpointRef;
  masterUrl: string;
  mirror: MasterStateMirror;
  env: RpcEnv;
  /** Keeps a child to kill at shutdown; returns the function that forgets it. */
  track(child: { kill(): unknown }): () => void;
  log(line: string): void;
  /** The agent's folder for drivers' output, removed when the agent stops. */
  outputDir(): string;
}

type Result = { success: boolean; message: string; appId?: string; driverId?: string };

const ended = ['FINISHED', 'FAILED', 'KILLED', 'ERROR'];
let submits = 0;

/**
 * Submits an application and resolves once the master has registered it (found by name among the
 * applications that were not there before), so the extension can reveal it. Client mode runs
 * `wick submit` as a child of the agent (the driver must live somewhere; never in the extension
 * host); cluster mode asks the master for a driver, as `wick submit --deploy-mode cluster` does.
 */
export async function submitApplication(p: SubmitParams, ctx: Ctx): Promise<Result> {
  const name = p.name ?? basename(p.file, extname(p.file));
  const before = new Set(allApps(ctx.mirror.state).map((a) => a.id));
  // The app may name itself (WickContext.create({ appName })): prefer the name, else the first new app.
  const registered = (s: MasterState) => {
    const fresh = allApps(s)
      .filter((a) => !before.has(a.id))
      .sort((a, b) => a.startTime - b.startTime);
    return (fresh.find((a) => a.name === name) ?? fresh[0])?.id;
  };
  const conf: Record<string, string> = p.name ? { 'wick.app.name': p.name } : {};
  if (p.executorMemory) conf['wick.executor.memory'] = p.executorMemory;
  if (p.executorCores) conf['wick.executor.cores'] = String(p.executorCores);
  if (p.maxCores) conf['wick.cores.max'] = String(p.maxCores);

  if (p.deployMode === 'client') {
    const log = join(ctx.outputDir(), `submit-${Date.now()}-${++submits}.log`);
    const fd = openSync(log, 'w');
    const child = execa(
      process.execPath,
      [
        process.argv[1] as string,
        'submit',
        '--exit-with-parent',
        '--master',
        ctx.masterUrl,
        '--deploy-mode',
        'client',
        ...Object.entries(conf).flatMap(([k, v]) => ['--conf', `${k}=${v}`]),
        p.file,
        ...p.args,
      ],
      {
        // stdin: a pipe that closes when the agent ends, however it ends (--exit-with-parent).
        // fd 3: the driver says there which app it registered (backend/app/driver/launcherReport.ts).
        stdio: ['pipe', fd as 3, fd as 3, 'pipe'],
        env: { WICK_LAUNCHER_FD: '3' },
        reject: false,
        cleanup: false,
        cwd: dirname(p.file),
      },
    );
    // The child has its own copy: the agent's would leak, one per submit.
    closeSync(fd);
    const forget = ctx.track(child);
    void child.then(() => forget());
    const exited = child.then((r) => ({ exit: r.exitCode ?? 1 }));
    // Its own report, else (a driver that closed the pipe without one) the new app by name.
    const found = launcherReport(child.stdio[3] as Readable).then((appId) =>
      appId
        ? { appId }
        : ctx.mirror
            .waitFor((s) => registered(s) !== undefined)
            .then((s) => ({ appId: registered(s) as string })),
    );
    const first = await Promise.race([exited, found]);
    if ('appId' in first)
      return {
        success: true,
        appId: first.appId,
        message: `Submitted ${name} as ${first.appId} (driver output: ${log})`,
      };
    const tail = readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n');
    return {
      success: false,
      message: `The driver exited with status ${first.exit} before registering: ${tail}`,
    };
  }

  const bundled = await bundleApp(p.file);
  let shipped: FileRef;
  try {
    shipped = await uploadToMasters(ctx.env, ctx.masterUrl, bundled, [], () => {});
  } finally {
    await rm(bundled.root, { recursive: true, force: true });
  }
  const reply = await ctx.master.ask(
    RequestSubmitDriver({
      driverDescription: driverDescription({
        bundled,
        shipped,
        args: p.args,
        masterUrl: ctx.masterUrl,
        conf,
        name: p.name,
        memoryMB: parseMemoryMB('1g'),
        cores: 1,
        supervise: p.supervise === true,
      }),
    }),
  );
  if (!reply.success || !reply.driverId)
    return { success: false, message: `The master refused the driver: ${reply.message}` };
  const driverId = reply.driverId;
  const s = await ctx.mirror.waitFor((st) => {
    const d = [...st.activeDrivers, ...st.completedDrivers].find((x) => x.id === driverId);
    return registered(st) !== undefined || (d !== undefined && ended.includes(d.state));
  });
  const appId = registered(s);
  if (appId)
    return {
      success: true,
      appId,
      driverId,
      message: `Submitted ${name}: driver ${driverId}, application ${appId}`,
    };
  const d = [...s.activeDrivers, ...s.completedDrivers].find((x) => x.id === driverId);
  // A driver need not start an application (a plain script): ending FINISHED is its success.
  if (d?.state === 'FINISHED')
    return {
      success: true,
      driverId,
      message: `Driver ${driverId} ran ${name} and FINISHED; it registered no application`,
    };
  return {
    success: false,
    driverId,
    message: `Driver ${driverId} ended ${d?.state}${d?.exception ? `: ${d.exception}` : ''}`,
  };
}

/**
 * The app id a driver reports on its launcher pipe: its first line, `{"appId": "…"}`; undefined
 * when the pipe ends (or fails) without one.
 */
async function launcherReport(pipe: Readable): Promise<string | undefined> {
  const line = await firstLine(pipe);
  if (line === undefined) return undefined;
  try {
    const { appId } = JSON.parse(line) as { appId?: unknown };
    return typeof appId === 'string' && appId.startsWith('app-') ? appId : undefined;
  } catch {
    return undefined;
  }
}

function allApps(s: MasterState | undefined) {
  return s ? [...s.activeApps, ...s.completedApps] : [];
}
