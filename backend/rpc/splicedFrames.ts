/**
 * Frames that carry megabytes of base64 (a LogChunk) without JSON re-scanning them.
 *
 * The wire is unchanged: a spliced frame is ordinary compact JSON, and any JSON library reads it.
 * Only the costs move. Sending, JSON.stringify would scan the base64 string for characters to
 * escape (there are none) and the socket would re-encode the whole frame as UTF-8; instead the
 * envelope without the field is stringified (small) and the base64 bytes are copied in after it.
 * Receiving, JSON.parse would scan and copy the string again; instead, when a large frame ends in
 * one long string that is the last field of `params.message`, that string is cut out, the rest is
 * parsed, and the string is put back as a slice of the frame. What JSON.parse would have checked
 * in the cut-out text is checked here too: it holds no `"` (so it is one string) and no `\`
 * (so it needs no unescaping); control characters, which JSON forbids in a string, are only
 * accepted for a field declared base64, whose decoding on validation rejects them (see
 * protocol/base64.ts). Anything else takes the ordinary JSON.parse path.
 */

/** Below this a frame is parsed whole: the splice only pays off on large strings. */
export const SPLICE_MIN_CHARS = 64 * 1024;

/**
 * One notification as a line of bytes: `{"jsonrpc":"2.0","method":…,"params":{…,"message":{…,
 * "<field>":"<base64>"}}}` and a newline. `base64` must be standard base64 (its characters need no
 * escaping, so it is copied in as it is); the caller makes it with Buffer#toString('base64').
 * The frame is written at the start of `alloc(size)`, which may return a larger buffer.
 */
export function splicedNotification(
  method: string,
  params: { message: object },
  field: string,
  base64: string,
  alloc: (size: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  const text = JSON.stringify({ jsonrpc: '2.0', method, params });
  // `message` is the last member of params and params the last of the frame: the text ends in
  // the three braces that close message, params and the frame.
  const head = `${text.slice(0, -3)},${JSON.stringify(field)}:"`;
  const headBytes = Buffer.byteLength(head);
  const frame = alloc(headBytes + base64.length + 5).subarray(0, headBytes + base64.length + 5);
  frame.write(head, 0, 'utf8');
  frame.write(base64, headBytes, 'latin1');
  frame.write('"}}}\n', headBytes + base64.length, 'latin1');
  return frame;
}

/**
 * Parses a large frame whose last value is one long string in `params.message`; undefined when the
 * frame is not of that shape (the caller then parses it with JSON.parse). `accepts(method, field)`
 * says whether that field of that message may be spliced: one whose content is checked later.
 */
export function parseSplicedFrame(
  text: string,
  accepts: (method: string, field: string) => boolean,
): unknown {
  if (text.length < SPLICE_MIN_CHARS) return undefined;
  let end = text.length - 1;
  for (let braces = 0; braces < 3; braces++) {
    end = skipSpaceBack(text, end);
    if (text.charCodeAt(end) !== 0x7d /* } */) return undefined;
    end--;
  }
  end = skipSpaceBack(text, end);
  if (text.charCodeAt(end) !== 0x22 /* " */) return undefined;
  const open = lastQuoteBefore(text, end);
  if (open < 0 || end - open < SPLICE_MIN_CHARS / 2) return undefined;
  const backslash = text.indexOf('\\', open);
  if (backslash !== -1 && backslash < end) return undefined;
  const field = keyBefore(text, open);
  if (field === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(`${text.slice(0, open)}""${text.slice(end + 1)}`);
  } catch {
    return undefined;
  }
  const frame = value as { method?: unknown; params?: { message?: Record<string, unknown> } };
  if (!lastMemberObject(frame, 'params') || !lastMemberObject(frame.params, 'message')) {
    return undefined;
  }
  const message = frame.params?.message as Record<string, unknown>;
  // A key given twice keeps its last value, which is the string cut out.
  if (typeof frame.method !== 'string' || message[field] !== '' || !accepts(frame.method, field)) {
    return undefined;
  }
  message[field] = text.slice(open + 1, end);
  return value;
}

/**
 * The last `"` before `end`, found forwards: String#indexOf runs through a long one-byte string
 * many times faster than String#lastIndexOf, which walks back one character at a time.
 */
function lastQuoteBefore(text: string, end: number): number {
  let at = -1;
  for (;;) {
    const next = text.indexOf('"', at + 1);
    if (next === -1 || next >= end) return at;
    at = next;
  }
}

/** The key of the member whose string value opens at `open`, if it is a plain one (no escapes). */
function keyBefore(text: string, open: number): string | undefined {
  let i = skipSpaceBack(text, open - 1);
  if (text.charCodeAt(i) !== 0x3a /* : */) return undefined;
  i = skipSpaceBack(text, i - 1);
  if (text.charCodeAt(i) !== 0x22) return undefined;
  const start = text.lastIndexOf('"', i - 1);
  if (start < 0 || i - start > 200) return undefined;
  const key = text.slice(start + 1, i);
  return key.includes('\\') ? undefined : key;
}

/**
 * Whether `key` is the last member of `obj` and holds an object. Object.keys lists integer-like
 * keys first, whatever their place in the text: with one of those, "last" proves nothing.
 */
function lastMemberObject(obj: unknown, key: string): boolean {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return false;
  const keys = Object.keys(obj);
  if (keys.some((k) => /^(?:0|[1-9]\d*)$/.test(k))) return false;
  const v = (obj as Record<string, unknown>)[key];
  return keys[keys.length - 1] === key && typeof v === 'object' && v !== null && !Array.isArray(v);
}

function skipSpaceBack(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i--;
  }
}
