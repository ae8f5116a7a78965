import { rm } from 'node:fs/promises';
import { basename, dirname, extname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import type { FollowHandlers } from '../client/LogFollower.js';
import type { MasterStateMirror } from '../client/MasterStateMirror.js';
import { parseMemoryMB } from '../conf/daemon.js';
import { RequestSubmitDriver } from '../protocol/client.js';
import type { FileRef } from '../protocol/files.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import type { LogSource, LogStream } from '../shared/logSource.js';
import { bundleApp } from '../submit/bundle.js';
import { driverDescription } from '../submit/driverDescription.js';
import { uploadToMasters } from '../submit/uploadApp.js';
import {
  checkOutputId,
  chunkDecoder,
  type DriverOutputSink,
  OutputTail,
  pipeChildOutput,
  sendInChunks,
} from './driverOutput.js';
import type { MasterState, SubmitParams } from './protocol.js';

interface Ctx {
  master: RpcEndpointRef;
  masterUrl: string;
  mirror: MasterStateMirror;
  env: RpcEnv;
  /** Keeps a child to kill at shutdown; returns the function that forgets it. */
  track(child: { kill(): unknown }): () => void;
  log(line: string): void;
  /** Where a submit's driver output goes (SubmitParams.outputId). */
  output: DriverOutputSink;
  /** The bundle's error for this file, or undefined when it compiles (checkApp.ts); never rejects. */
  compileError(file: string): Promise<string | undefined>;
  /** Where the submit stands, for the editor's progress ("Bundling…"); never throws. */
  progress(message: string): void;
  /** Follows a log from its start (the driver's, in cluster mode) into `handlers`. */
  follow(source: LogSource, stream: LogStream, handlers: FollowHandlers): Promise<unknown>;
}

type Result = { success: boolean; message: string; appId?: string; driverId?: string };

const ended = ['FINISHED', 'FAILED', 'KILLED', 'ERROR'];

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

  const outputId = checkOutputId(p.outputId);
  const file = basename(p.file);
  if (p.deployMode === 'client') {
    // The child's first work is the bundle; it says on the launcher pipe when that is done.
    ctx.progress(`Bundling ${file}…`);
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
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        // Read as it comes and passed on: buffering would hold a long driver's output in memory
        // and cut the child off at maxBuffer.
        buffer: false,
        env: { WICK_LAUNCHER_FD: '3' },
        reject: false,
        cleanup: false,
        cwd: dirname(p.file),
      },
    );
    const forget = ctx.track(child);
    // The same bundle here, at once, beside the child's: the child must first start Node, load
    // the CLI and esbuild (a second or more), the agent has them loaded. A syntax error found
    // here first answers the submit, and the child, which would only say the same later, goes
    // (issue 29: a syntax error as fast as a clean submit). A clean bundle changes nothing.
    let superseded = false;
    const compileError = ctx.compileError(p.file);
    const tail = new OutputTail();
    let wrote = false;
    const drained = pipeChildOutput(child, (stream, text) => {
      if (superseded) return;
      wrote = true;
      tail.add(text);
      if (outputId) sendInChunks(ctx.output, outputId, stream, text);
    });
    // Reported once the pipes are drained, so that the extension has every line before the end.
    const exited = child.then(async (r) => {
      forget();
      await drained;
      const code = r.exitCode ?? null;
      if (outputId && !superseded)
        ctx.output.driverExited(
          outputId,
          code,
          r.signal
            ? `the driver was ended by ${r.signal}`
            : `the driver exited with status ${code}`,
        );
      return { exit: code ?? 1 };
    });
    // Its own report, else (a driver that closed the pipe without one) the new app by name.
    const found = launcherReport(child.stdio[3] as Readable, () =>
      ctx.progress('Starting the driver…'),
    ).then((appId) =>
      appId
        ? { appId }
        : ctx.mirror
            .waitFor((s) => registered(s) !== undefined)
            .then((s) => ({ appId: registered(s) as string })),
    );
    // Only while the child has said nothing: its own words are never doubled or cut.
    const uncompiled = compileError.then((message) =>
      message !== undefined && !wrote ? { message } : new Promise<never>(() => {}),
    );
    const first = await Promise.race([exited, found, uncompiled]);
    if ('message' in first) {
      superseded = true;
      child.kill('SIGTERM');
      if (outputId) {
        // The words `wick submit` prints for it (checkApp.ts): the editor's Problems read them.
        sendInChunks(ctx.output, outputId, 'stderr', `wick: ${first.message}\n`);
        ctx.output.driverExited(outputId, 1, 'the application did not compile');
      }
      return { success: false, message: `The application did not compile: ${first.message}` };
    }
    if ('appId' in first)
      return { success: true, appId: first.appId, message: `Submitted ${name} as ${first.appId}` };
    return {
      success: false,
      message: `The driver exited with status ${first.exit} before registering: ${tail.lines(5)}`,
    };
  }

  ctx.progress(`Bundling ${file}…`);
  const bundled = await bundleApp(p.file);
  let shipped: FileRef;
  try {
    ctx.progress(`Uploading ${file} to the master…`);
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
  ctx.progress(`Starting the driver ${driverId} on a worker…`);
  if (outputId) void followDriverOutput(driverId, outputId, ctx);
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
 * Cluster mode: the driver's stdout and stderr on its worker, from their start, once the master
 * has placed it; DriverExited when both logs have ended (or the driver ended without a worker).
 */
async function followDriverOutput(driverId: string, outputId: string, ctx: Ctx): Promise<void> {
  const find = (st: MasterState) =>
    [...st.activeDrivers, ...st.completedDrivers].find((x) => x.id === driverId);
  const placed = await ctx.mirror.waitFor((st) => {
    const d = find(st);
    return d?.workerId !== undefined || (d !== undefined && ended.includes(d.state));
  });
  const placedDriver = find(placed);
  const follows = (['stdout', 'stderr'] as const).map((stream) =>
    placedDriver?.workerId === undefined
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const decode = chunkDecoder();
          ctx
            .follow({ driverId }, stream, {
              chunk: (c) => sendInChunks(ctx.output, outputId, stream, decode(c)),
              ended: () => resolve(),
            })
            .catch((err: Error) => {
              sendInChunks(
                ctx.output,
                outputId,
                'stderr',
                `[wick: cannot follow the ${stream} of driver ${driverId}: ${err.message}]\n`,
              );
              resolve();
            });
        }),
  );
  await Promise.all(follows);
  // The logs end when the process does; the master hears of its end a moment later.
  const after = await ctx.mirror.waitFor((st) => find(st)?.state !== 'RUNNING');
  const last = find(after);
  ctx.output.driverExited(
    outputId,
    null,
    `driver ${driverId} ${last && ended.includes(last.state) ? `ended ${last.state}` : 'stopped writing'}`,
  );
}

/**
 * The app id a driver reports on its launcher pipe (backend/app/driver/launcherReport.ts): its
 * lines are phases done (`{"phase": "bundled"}`, passed to `onBundled`), then `{"appId": "…"}`;
 * undefined when the pipe ends (or fails) without an app id. Lines are bounded: anything else on
 * the pipe (it is the child's own descriptor) is ignored, never trusted.
 */
async function launcherReport(pipe: Readable, onBundled: () => void): Promise<string | undefined> {
  const lines = createInterface({ input: pipe, crlfDelay: Number.POSITIVE_INFINITY });
  pipe.once('error', () => lines.close());
  try {
    for await (const line of lines) {
      if (line.length > 1024) continue;
      let report: { appId?: unknown; phase?: unknown };
      try {
        report = JSON.parse(line) as typeof report;
      } catch {
        continue;
      }
      if (report?.phase === 'bundled') onBundled();
      const appId = report?.appId;
      if (typeof appId === 'string' && appId.startsWith('app-')) return appId;
    }
  } catch {
    // The pipe failed: no report.
  } finally {
    lines.close();
    pipe.destroy();
  }
  return undefined;
}

function allApps(s: MasterState | undefined) {
  return s ? [...s.activeApps, ...s.completedApps] : [];
}
