/**
 * Daemon logging in Spark's shape (`26/11/30 03:40:01 INFO Master: ...`) on stderr, so that a
 * worker's log file reads like Spark's. Kept tiny on purpose: daemons write lines, tests read
 * them; nothing here needs a logging framework's appenders or rotation.
 */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

const order: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40 };

function parseLevel(raw: string | undefined): LogLevel {
  const up = raw?.toUpperCase();
  return up === 'DEBUG' || up === 'INFO' || up === 'WARN' || up === 'ERROR' ? up : 'INFO';
}

let threshold: LogLevel = parseLevel(process.env.WICK_LOG_LEVEL);
let sink: (line: string) => void = (line) => process.stderr.write(`${line}\n`);

export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

/** Redirects every logger, for tests that assert on what was logged. Returns the old sink. */
export function setLogSink(next: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = next;
  return prev;
}

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getFullYear() % 100)}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export class Logger {
  constructor(readonly name: string) {}

  debug(msg: string): void {
    this.log('DEBUG', msg);
  }
  info(msg: string): void {
    this.log('INFO', msg);
  }
  warn(msg: string, err?: unknown): void {
    this.log('WARN', err === undefined ? msg : `${msg}: ${describe(err)}`);
  }
  error(msg: string, err?: unknown): void {
    this.log('ERROR', err === undefined ? msg : `${msg}: ${describe(err, true)}`);
  }

  isDebugEnabled(): boolean {
    return order[threshold] <= order.DEBUG;
  }

  private log(level: LogLevel, msg: string): void {
    if (order[level] < order[threshold]) return;
    sink(`${stamp(new Date())} ${level} ${this.name}: ${msg}`);
  }
}

function describe(err: unknown, withStack = false): string {
  if (err instanceof Error) return withStack && err.stack ? err.stack : err.message;
  return String(err);
}

export function getLogger(name: string): Logger {
  return new Logger(name);
}
