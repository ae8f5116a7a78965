/**
 * A request/response channel between a benchmark and a server process it started with
 * startServer(): the benchmark writes one JSON command per line to the server's stdin, and the
 * server answers each with one JSON line on stdout carrying the command's id. Servers that only
 * serve (and never take commands) do not need this.
 */
import { createInterface } from 'node:readline';
import type { ServerProcess } from './process.js';

export interface Command {
  cmd: string;
  [field: string]: unknown;
}

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

/** The benchmark's side: send commands to one server and await their results. */
export class Control {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();

  constructor(
    private readonly server: ServerProcess<unknown>,
    private readonly label: string,
  ) {
    server.lines.on('line', (line) => this.onLine(line));
    void server.exited.then((code) => {
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new Error(`${label} exited (${code}) before answering command ${id}`));
      }
      this.pending.clear();
    });
  }

  /** Sends a command; rejects if the server reports an error, exits, or takes over `timeoutMs`. */
  request<R>(command: Command, timeoutMs = 120_000): Promise<R> {
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: no answer to ${command.cmd} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.server.child.stdin?.write(`${JSON.stringify({ id, ...command })}\n`);
    });
  }

  private onLine(line: string): void {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      console.error(`[${this.label}] ${line}`);
      return;
    }
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    clearTimeout(p.timer);
    if (reply.error !== undefined) p.reject(new Error(`${this.label}: ${reply.error}`));
    else p.resolve(reply.result);
  }
}

/**
 * The server's side: handles each command line from stdin with `handler` and prints its result.
 * Use together with exitWithParent(), which ends the server when stdin closes.
 */
export function serveCommands(handler: (command: Command) => unknown): void {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let msg: Command & { id: number };
    try {
      msg = JSON.parse(line) as Command & { id: number };
    } catch {
      return;
    }
    Promise.resolve()
      .then(() => handler(msg))
      .then(
        (result) => process.stdout.write(`${JSON.stringify({ id: msg.id, result })}\n`),
        (err: unknown) =>
          process.stdout.write(
            `${JSON.stringify({ id: msg.id, error: err instanceof Error ? err.message : String(err) })}\n`,
          ),
      );
  });
}
