/**
 * An event read back from a log, checked against its schema (backend/protocol/listener.ts) before
 * anything believes it: a log is a file anyone could have written, and every field of an event
 * has a bound there. Compiled once, on first use,
 * as the master's persistence checks its records.
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  listenerEvents,
  WickListenerApplicationEnd,
  WickListenerApplicationStart,
  WickListenerEvent,
} from '../protocol/listener.js';

type Compiled<T extends TSchema> = ReturnType<typeof TypeCompiler.Compile<T>>;

/** Compiled on first use: a command that imports this and reads no log (`wick submit`) skips it. */
function once<T extends TSchema>(schema: T): () => Compiled<T> {
  let compiled: Compiled<T> | undefined;
  return () => {
    compiled ??= TypeCompiler.Compile(schema);
    return compiled;
  };
}

const anyEvent = once(WickListenerEvent);
const appStart = once(WickListenerApplicationStart);
const appEnd = once(WickListenerApplicationEnd);
/** Each event's own schema, by its name: its errors say which field is wrong. */
let byName: Map<string, Compiled<TSchema>> | undefined;

export function isListenerEvent(value: unknown): value is WickListenerEvent {
  return anyEvent().Check(value);
}

export function isApplicationStart(value: unknown): value is WickListenerApplicationStart {
  return appStart().Check(value);
}

export function isApplicationEnd(value: unknown): value is WickListenerApplicationEnd {
  return appEnd().Check(value);
}

/** Why `value` is no event, in one line (the first error TypeBox finds), for a warning. */
export function whyNotAnEvent(value: unknown): string {
  const name =
    typeof value === 'object' && value !== null && 'event' in value
      ? String((value as { event: unknown }).event).slice(0, 60)
      : undefined;
  byName ??= new Map(
    listenerEvents.map((schema) => [
      schema.properties.event.const as string,
      TypeCompiler.Compile(schema as TSchema),
    ]),
  );
  const own = name === undefined ? undefined : byName.get(name);
  if (!own) {
    return name === undefined
      ? 'a value with no "event" field'
      : `an event of an unknown kind ${JSON.stringify(name)}`;
  }
  const first = own.Errors(value).First();
  return `a ${name} that does not match its schema${first ? ` (${first.path || '/'}: ${first.message})` : ''}`;
}
