import type { TSchema } from '@sinclair/typebox';
import { RpcError, RpcErrorCode } from './errors.js';

/**
 * Bytes on the wire are base64 strings, declared `Type.String({ contentEncoding: 'base64' })`.
 * The receiving env checks them when it validates the message, which means decoding them; the
 * bytes it decoded are kept beside the message (a WeakMap, nothing on the message itself), so the
 * endpoint that wants them (`bytesOf`) does not decode the same megabytes a second time.
 */

const decodedBytes = new WeakMap<object, Map<string, Buffer>>();

/**
 * Decodes standard base64 (RFC 4648 §4, padded), or returns undefined if `text` is not base64.
 * Node's decoder skips characters outside the alphabet and stops at a misplaced `=`; either way it
 * yields fewer bytes than the length promises, which is how a bad string is caught without a
 * regular expression over megabytes. (Node's decoder also reads `-` and `_` as `+` and `/`; that
 * leniency is kept: the bytes are still exact.)
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0) return undefined;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (text.length / 4) * 3 - pad ? bytes : undefined;
}

/** The names of a message schema's base64 fields. */
export function base64Fields(schema: TSchema): string[] {
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  return Object.keys(props).filter((k) => props[k]?.contentEncoding === 'base64');
}

/**
 * Checks the base64 fields of a received message and keeps their bytes for bytesOf. Returns the
 * first bad field's name, or undefined.
 */
export function checkBase64Fields(message: object, fields: readonly string[]): string | undefined {
  let kept: Map<string, Buffer> | undefined;
  for (const field of fields) {
    const text = (message as Record<string, unknown>)[field];
    if (typeof text !== 'string') continue;
    const bytes = decodeBase64(text);
    if (!bytes) return field;
    if (!kept) {
      kept = new Map();
      decodedBytes.set(message, kept);
    }
    kept.set(field, bytes);
  }
  return undefined;
}

/**
 * The bytes of a message's base64 field: those decoded when the message was checked on receipt,
 * else decoded now (a message built in this process). Throws InvalidParams on bad base64.
 */
export function bytesOf<M extends object>(message: M, field: keyof M & string): Buffer {
  const kept = decodedBytes.get(message)?.get(field);
  if (kept) return kept;
  const text = message[field];
  const bytes = typeof text === 'string' ? decodeBase64(text) : undefined;
  if (!bytes) {
    const shown = typeof text === 'string' ? JSON.stringify(text.slice(0, 40)) : typeof text;
    throw new RpcError(
      RpcErrorCode.InvalidParams,
      `Field ${field} should be standard base64 (length a multiple of 4, padded with =), got ${shown}${typeof text === 'string' && text.length > 40 ? '…' : ''}`,
    );
  }
  return bytes;
}
