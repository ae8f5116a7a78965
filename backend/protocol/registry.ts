import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { base64Fields, checkBase64Fields } from './base64.js';

/**
 * Every message that crosses a process boundary is declared here through `defineMessage`: its
 * name (Spark's, where Spark has one), a one-line doc, its fields as a TypeBox schema, and the
 * boundary it belongs to. The schema is the runtime validator on receipt, the TypeScript type,
 * and (through scripts/gen-schemas.ts) the JSON Schema in docs/protocol/ — one source for all
 * three, so they cannot drift apart.
 */

export interface MessageDef<N extends string = string, T extends { type: N } = { type: N }> {
  readonly type: N;
  readonly doc: string;
  /** The group in docs/protocol.md, e.g. "Worker → Master". */
  readonly boundary: string;
  readonly schema: TSchema;
  readonly check: TypeCheck<TSchema>;
  /** Its fields that carry bytes as base64 (checked on receipt beyond the schema). */
  readonly base64: readonly string[];
  /** Builds a message, filling in `type`. */
  (fields: Omit<T, 'type'>): T;
}

/** Any message definition, whatever its fields (for APIs that take one to check a reply). */
// biome-ignore lint/suspicious/noExplicitAny: the fields' type is erased here by design
export type AnyMessageDef = MessageDef<string, any>;

export type MessageOf<D> = D extends MessageDef<string, infer T> ? T : never;

/** Any message: what an endpoint receives before it narrows on `type`. */
export interface WireMessage {
  readonly type: string;
  readonly [field: string]: unknown;
}

const registry = new Map<string, MessageDef>();

export function defineMessage<N extends string, P extends TProperties>(
  boundary: string,
  type: N,
  doc: string,
  fields: P,
): MessageDef<N, { type: N } & Static<TObject<P>>> {
  if (registry.has(type)) throw new Error(`Message type ${type} is defined twice`);
  const schema: TSchema = Type.Object(
    { type: Type.Literal(type), ...fields },
    { $id: type, title: type, description: doc, additionalProperties: false },
  );
  // `type` first on the wire, and not overwritten by fields spread from another message.
  const build = (f: object) => Object.assign({ type }, f, { type });
  const def = Object.assign(build, { type, doc, boundary, schema, base64: base64Fields(schema) });
  // Compiled on first use: a process loads every definition but receives few of them (an
  // executor start-up would otherwise compile a hundred validators it never runs).
  let check: TypeCheck<TSchema> | undefined;
  Object.defineProperty(def, 'check', {
    get: () => {
      check ??= TypeCompiler.Compile(schema);
      return check;
    },
    enumerable: true,
  });
  registry.set(type, def as unknown as MessageDef);
  return def as unknown as MessageDef<N, { type: N } & Static<TObject<P>>>;
}

/**
 * Compiles now the validators of the messages whose boundary (e.g. 'Driver → Executor') passes
 * `wanted`: for a process that has time before its first message (a standby executor), so that
 * the compilation is not on the path of the first reply.
 */
export function precompileValidators(wanted: (boundary: string) => boolean): number {
  let n = 0;
  for (const def of registry.values()) {
    if (!wanted(def.boundary)) continue;
    void def.check;
    n++;
  }
  return n;
}

export function messageDef(type: string): MessageDef | undefined {
  return registry.get(type);
}

export function allMessageDefs(): MessageDef[] {
  return [...registry.values()];
}

/**
 * Checks a received message against its schema. Returns undefined when it is valid, else a
 * sentence naming the first offending field, its value and what was expected.
 */
export function validateMessage(def: AnyMessageDef, value: unknown): string | undefined {
  if (def.check.Check(value)) {
    // TypeBox does not look at contentEncoding; a base64 field is checked by decoding it.
    const bad = def.base64.length > 0 ? checkBase64Fields(value as object, def.base64) : undefined;
    if (bad === undefined) return undefined;
    const text = (value as Record<string, string>)[bad] as string;
    return `${def.type}: field /${bad} expected standard base64 (length a multiple of 4, padded with =), got ${previewJSON(text.length > 60 ? `${text.slice(0, 60)}…` : text)}`;
  }
  const first = def.check.Errors(value).First();
  if (!first) return `${def.type} does not match its schema`;
  const where = first.path === '' ? 'the message' : `field ${first.path}`;
  return `${def.type}: ${where} ${lowerFirst(first.message)}, got ${previewJSON(first.value)}`;
}

/**
 * A received value as JSON for an error message or a log line, cut to `max` characters. Never
 * throws: JSON.parse accepts nesting deeper than JSON.stringify can recurse, so a peer could
 * otherwise turn the description of its own bad input into a RangeError.
 */
export function previewJSON(value: unknown, max = 120): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return `${Array.isArray(value) ? 'an array' : `a ${typeof value}`} too deeply nested to show`;
  }
  return text === undefined ? 'nothing' : truncate(text, max);
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

export { Type };
