import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { type TypeCheck, ValueErrorType } from '@sinclair/typebox/compiler';
import { base64Fields, checkBase64Fields } from './base64.js';
import { compiledCheck } from './compiledCheck.js';

/**
 * Every message that crosses a process boundary is declared here through `defineMessage`: its
 * name (Spark's, where Spark has one), a one-line doc, its fields as a TypeBox schema, and the
 * boundary it belongs to. The schema is the runtime validator on receipt, the TypeScript type,
 * and (through scripts/gen-schemas.ts) the JSON Schema in docs/protocol/ — one source for all
 * three, so they cannot drift apart.
 */

/**
 * Who takes part in the protocol. A definition names the roles that may send it and the one that
 * receives it; the router checks the sender's role against it (issue "Nobody gets in" binds a
 * role to an authenticated connection), and a test checks that each receiving endpoint has a
 * handler for every message of its boundaries.
 */
export type Role = 'master' | 'worker' | 'driver' | 'executor' | 'client' | 'any' | 'self';

/** One direction of one boundary: its heading in docs/protocol.md, its senders and receiver. */
export interface Boundary {
  readonly name: string;
  readonly from: readonly Role[];
  readonly to: readonly Role[];
}

export function boundary(
  name: string,
  from: Role | readonly Role[],
  to: Role | readonly Role[],
): Boundary {
  return { name, from: [from].flat(), to: [to].flat() };
}

declare const replyBrand: unique symbol;
/**
 * A phantom field on a request's type naming its reply, so that `ref.ask(RequestX({...}))` is
 * typed by the definition (vscode-jsonrpc's RequestType<P, R>); it never exists at run time.
 */
// A type alias, not an interface: a message type must stay assignable to WireMessage's index
// signature, which TypeScript grants to object literal types only.
export type Asks<R> = { readonly [replyBrand]?: R };

/** A request's phantom reply field; nothing for a one-way message or a reply. */
type AsksFor<R> = [R] extends [never] ? unknown : Asks<MessageOf<R>>;

/** The reply type of a request message (WireMessage for one built by hand). */
export type ReplyOf<M> =
  M extends Asks<infer R> ? (unknown extends R ? WireMessage : R) : WireMessage;

export interface MessageDef<
  N extends string = string,
  T extends { type: N } = { type: N },
  R extends WireMessage = never,
> {
  readonly type: N;
  readonly doc: string;
  /** The group in docs/protocol.md, e.g. "Worker → Master". */
  readonly boundary: string;
  /** The roles that may send it. */
  readonly from: readonly Role[];
  /** The roles whose endpoints handle it. */
  readonly to: readonly Role[];
  /**
   * For a request (sent with `ask`): the definitions of its possible replies. Undefined for a
   * one-way message (sent with `send`, a JSON-RPC notification) and for a reply.
   */
  readonly replies: readonly AnyMessageDef[] | undefined;
  readonly schema: TSchema;
  readonly check: TypeCheck<TSchema>;
  /** Its fields that carry bytes as base64 (checked on receipt beyond the schema). */
  readonly base64: readonly string[];
  /** Builds a message, filling in `type`. */
  (fields: Omit<T, 'type' | typeof replyBrand>): T;
  /** Type-level only: the reply's type. */
  readonly __reply?: R;
}

/** Any message definition, whatever its fields (for APIs that take one to check a reply). */
// biome-ignore lint/suspicious/noExplicitAny: the fields' type is erased here by design
export type AnyMessageDef = MessageDef<string, any, any>;

export type MessageOf<D> = D extends MessageDef<string, infer T, infer _R> ? T : never;
/** The reply a request definition declares (never for a one-way message). */
export type DefReply<D> = D extends MessageDef<string, infer _T, infer R> ? R : never;

/** Any message: what an endpoint receives before it narrows on `type`. */
export interface WireMessage {
  readonly type: string;
  readonly [field: string]: unknown;
}

/**
 * Every name defined in this process, so that a name is defined once, in the order defined: a
 * module's namespace lists its exports alphabetically, and the docs follow the source's order.
 */
const defined = new Map<string, number>();

interface DefineOptions<R extends AnyMessageDef> {
  /**
   * Makes it a request, answered by one of these (a function, so that a reply defined further
   * down the file, in its own direction's group, can be named).
   */
  reply?: () => R | readonly R[];
  /** Senders other than the boundary's (a push from the receiving side of a ↔ boundary). */
  from?: Role | readonly Role[];
  /** Receivers other than the boundary's. */
  to?: Role | readonly Role[];
}

export function defineMessage<
  N extends string,
  P extends TProperties,
  R extends AnyMessageDef = never,
>(
  where: Boundary | string,
  type: N,
  doc: string,
  fields: P,
  options: DefineOptions<R> = {},
): MessageDef<N, { type: N } & Static<TObject<P>> & AsksFor<R>, MessageOf<R>> {
  if (defined.has(type)) throw new Error(`Message type ${type} is defined twice`);
  defined.set(type, defined.size);
  const b = typeof where === 'string' ? boundary(where, 'any', 'any') : where;
  const schema: TSchema = Type.Object(
    { type: Type.Literal(type), ...fields },
    { $id: type, title: type, description: doc, additionalProperties: false },
  );
  // `type` first on the wire, and not overwritten by fields spread from another message.
  const build = (f: object) => Object.assign({ type }, f, { type });
  const from = options.from === undefined ? b.from : [options.from].flat();
  const def = Object.assign(build, {
    type,
    doc,
    boundary: b.name,
    from,
    to: options.to === undefined ? b.to : [options.to].flat(),
    schema,
    base64: base64Fields(schema),
  });
  // Compiled on first use: a process loads every definition but receives few of them (an
  // executor start-up would otherwise compile a hundred validators it never runs).
  let check: TypeCheck<TSchema> | undefined;
  let replies: readonly AnyMessageDef[] | undefined;
  Object.defineProperties(def, {
    check: {
      get: () => {
        check ??= compiledCheck(type, schema);
        return check;
      },
      enumerable: true,
    },
    replies: {
      get: () => {
        if (options.reply) replies ??= [options.reply()].flat() as AnyMessageDef[];
        return replies;
      },
      enumerable: true,
    },
  });
  return def as unknown as MessageDef<
    N,
    { type: N } & Static<TObject<P>> & AsksFor<R>,
    MessageOf<R>
  >;
}

const selfBoundary = boundary('Self', 'self', 'self');

/**
 * A message an endpoint sends itself (from a timer, a callback): typed like the others, but in
 * no catalogue, so no peer can send it (Spark's MasterMessages).
 */
export function defineSelfMessage<N extends string, P extends TProperties = Record<never, never>>(
  type: N,
  doc: string,
  fields: P = {} as P,
): MessageDef<N, { type: N } & Static<TObject<P>>> {
  return defineMessage(selfBoundary, type, doc, fields);
}

export function isMessageDef(value: unknown): value is AnyMessageDef {
  return (
    typeof value === 'function' &&
    typeof (value as Partial<AnyMessageDef>).type === 'string' &&
    (value as Partial<AnyMessageDef>).schema !== undefined
  );
}

/**
 * The messages an RpcEnv accepts from its peers, given to it by whoever creates it: the transport
 * knows no protocol but its own.
 */
export class MessageCatalog {
  private readonly byType = new Map<string, AnyMessageDef>();

  /** From definitions, or from modules whose exported definitions it collects. */
  constructor(...sources: readonly (AnyMessageDef | MessageCatalog | object)[]) {
    for (const source of sources) {
      const defs =
        source instanceof MessageCatalog
          ? source.all()
          : isMessageDef(source)
            ? [source]
            : Object.values(source)
                .filter(isMessageDef)
                .sort((a, b) => (defined.get(a.type) ?? 0) - (defined.get(b.type) ?? 0));
      for (const def of defs) {
        const seen = this.byType.get(def.type);
        if (seen !== undefined && seen !== def) {
          throw new Error(`Message type ${def.type} is in the catalogue twice`);
        }
        this.byType.set(def.type, def);
      }
    }
  }

  get(type: string): AnyMessageDef | undefined {
    return this.byType.get(type);
  }

  all(): AnyMessageDef[] {
    return [...this.byType.values()];
  }

  /** This catalogue and more (a test's own messages, say). */
  with(...sources: readonly (AnyMessageDef | MessageCatalog | object)[]): MessageCatalog {
    return new MessageCatalog(this, ...sources);
  }

  /**
   * Compiles now the validators of the messages whose boundary (e.g. 'Driver → Executor') passes
   * `wanted`: for a process that has time before its first message (a standby executor), so that
   * the compilation is not on the path of the first reply.
   */
  precompile(wanted: (boundary: string) => boolean): number {
    let n = 0;
    for (const def of this.byType.values()) {
      if (!wanted(def.boundary)) continue;
      void def.check;
      n++;
    }
    return n;
  }
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
  if (first.type === ValueErrorType.ObjectRequiredProperty) {
    return `${def.type}: ${where(first.path)} is required but missing`;
  }
  const keys = (first.schema as { patternProperties?: Record<string, unknown> }).patternProperties;
  if (first.type === ValueErrorType.ObjectAdditionalProperties && keys) {
    // A map's key that its pattern refuses: the path ends with the key, which may be huge.
    const cut = first.path.lastIndexOf('/');
    const key = unescapePointer(first.path.slice(cut + 1));
    return `${def.type}: ${where(first.path.slice(0, cut))} has a key ${previewJSON(key, 60)} (${key.length} characters) not matching ${Object.keys(keys).join(' or ')}`;
  }
  return `${def.type}: ${where(first.path)} ${lowerFirst(first.message)}, got ${previewJSON(first.value)}`;
}

/** A JSON pointer as the error names it, cut: a peer chooses the keys in it. */
function where(path: string): string {
  return path === '' ? 'the message' : `field ${truncate(path, 200)}`;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
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
