/**
 * A submitted driver's stdout and stderr, pushed to the extension as it is written, under the
 * output id the extension chose for that submit: from the client-mode child's pipes, or (cluster
 * mode) by following the driver's two logs on its worker. Text, not bytes: each stream has its
 * own UTF-8 decoder, so a character split between two reads or two chunks arrives whole.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { bytesOf } from '../protocol/base64.js';
import type { LogStream } from '../shared/logSource.js';

/** The most text one DriverOutput notification carries (a larger read is sent in pieces). */
export const MAX_DRIVER_OUTPUT_CHUNK = 16 * 1024;
/** What an output id may be: the extension makes them; the agent passes them back unchanged. */
const OUTPUT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface DriverOutputSink {
  driverOutput(outputId: string, stream: LogStream, data: string): void;
  driverExited(outputId: string, exitCode: number | null, reason: string): void;
}

/** The output id of a submit, checked: undefined when the submit asked for none. */
export function checkOutputId(id: unknown): string | undefined {
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || !OUTPUT_ID.test(id))
    throw new Error(
      `outputId ${JSON.stringify(id)?.slice(0, 80)} is not valid: expected 1 to 64 letters, digits, "_" or "-"`,
    );
  return id;
}

/** Sends `text` as notifications of at most MAX_DRIVER_OUTPUT_CHUNK characters, in order. */
export function sendInChunks(
  sink: DriverOutputSink,
  outputId: string,
  stream: LogStream,
  text: string,
): void {
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + MAX_DRIVER_OUTPUT_CHUNK);
    // Never between the two halves of a surrogate pair.
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] as string)) end--;
    sink.driverOutput(outputId, stream, text.slice(i, end));
    i = end;
  }
}

/**
 * The last `max` characters a driver wrote, for the message of a submit that failed before the
 * app registered (the whole output went to the extension already).
 */
export class OutputTail {
  private text = '';
  constructor(private readonly max = 8192) {}
  add(s: string): void {
    this.text = (this.text + s).slice(-this.max);
  }
  lines(n: number): string {
    return this.text.trim().split('\n').slice(-n).join('\n');
  }
}

/**
 * Pushes a child's stdout and stderr; resolves once both have ended (after the child's exit, what
 * it wrote is all there).
 */
export function pipeChildOutput(
  child: { stdout: Readable | null; stderr: Readable | null },
  onText: (stream: LogStream, text: string) => void,
): Promise<void> {
  const pump = (stream: LogStream, r: Readable | null) =>
    new Promise<void>((resolve) => {
      if (!r) return resolve();
      r.setEncoding('utf8');
      r.on('data', (s: string) => onText(stream, s));
      r.once('close', () => resolve());
      r.once('error', () => resolve());
    });
  return Promise.all([pump('stdout', child.stdout), pump('stderr', child.stderr)]).then(() => {});
}

/** Turns a followed log's chunks (base64 bytes) into text, one decoder per stream. */
export function chunkDecoder(): (chunk: { data: string }) => string {
  const decoder = new StringDecoder('utf8');
  return (chunk) => decoder.write(bytesOf(chunk, 'data'));
}
