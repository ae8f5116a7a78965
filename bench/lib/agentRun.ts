/**
 * `wick agent` as the VS Code extension starts it (extension/agent/agentClient.ts: `node
 * dist/wick.cjs agent --stdio`, JSON-RPC over stdio), spoken to with vscode-jsonrpc, the transport
 * vscode-languageclient uses: what the extension sees of the first minute, without code-server
 * around it. Every moment is performance.now() when this process read the message.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import {
  type Connection,
  DriverExited,
  type MasterState,
  StateChanged,
  SubmitProgress,
} from '../../backend/agent/protocol.js';

export interface Push {
  at: number;
  connection: Connection;
  state?: MasterState;
}

export interface AgentRun {
  startedAt: number;
  conn: MessageConnection;
  pushes: Push[];
  /** The agent's log lines (connection.console.log), with when each came. */
  logs: { at: number; text: string }[];
  /** Submit progress notifications, by output id. */
  progress: { at: number; outputId: string; message: string }[];
  exits: { at: number; outputId: string; exitCode: number | null; reason: string }[];
  /** Resolves with the first message of `list` that `pred` accepts, as soon as it comes. */
  waitFor<T>(list: T[], pred: (x: T) => boolean, what: string, timeoutMs?: number): Promise<T>;
  /** shutdown + exit, as the language client ends it; resolves when the process has exited. */
  stop(): Promise<void>;
}

export function aliveWorkers(s: MasterState | undefined): number {
  return s?.workers.filter((w) => w.state === 'ALIVE').length ?? 0;
}

/** The agent of the build in `dist` (the repository's dist/, or another commit's copy of it). */
export function startAgent(root: string, dist: string): AgentRun {
  const startedAt = performance.now();
  const child: ChildProcess = spawn(process.execPath, [join(dist, 'wick.cjs'), 'agent'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, WICK_DIST: dist },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout as NodeJS.ReadableStream),
    new StreamMessageWriter(child.stdin as NodeJS.WritableStream),
  );
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  const run: AgentRun = {
    startedAt,
    conn,
    pushes: [],
    logs: [],
    progress: [],
    exits: [],
    waitFor(list, pred, what, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the agent sent no ${what} within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        const check = () => {
          const hit = list.find(pred);
          if (hit === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        waiters.add(check);
        check();
      });
    },
    async stop() {
      try {
        await conn.sendRequest('shutdown');
        await conn.sendNotification('exit');
      } catch {
        // Gone already.
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      conn.dispose();
    },
  };
  conn.onNotification(StateChanged, (p) => {
    run.pushes.push({ at: performance.now(), connection: p.connection, state: p.state });
    wake();
  });
  conn.onNotification('window/logMessage', (p: { message: string }) => {
    run.logs.push({ at: performance.now(), text: p.message });
    wake();
  });
  conn.onNotification(SubmitProgress, (p) => {
    run.progress.push({ at: performance.now(), ...p });
    wake();
  });
  conn.onNotification(DriverExited, (p) => {
    run.exits.push({ at: performance.now(), ...p });
    wake();
  });
  conn.listen();
  return run;
}
