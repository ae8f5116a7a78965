import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { Hash } from '@sinclair/typebox/value';
import { aotChecks, type CheckFactory } from './aotChecks.js';

/**
 * The validator of `schema`: its check compiled ahead of time under `name` (aotChecks.ts) when
 * the build made one, else compiled now. A process's first TypeCompiler.Compile costs tens of
 * milliseconds (TypeBox's code generator runs cold), which every Wick process paid at its start
 * for the handshake's and the envelope's checks, and a submit again for its first messages.
 *
 * The check is TypeBox's own code for the same schema, so both accept and refuse the same values;
 * Errors() reads the schema, as before. A schema whose check needs TypeBox's type registry (a
 * custom kind) is not generated ahead (aotChecksModule.ts), and compiles here.
 */
export function compiledCheck<T extends TSchema>(name: string, schema: T): TypeCheck<T> {
  const factory = aotChecks[name];
  return factory ? aotCheck(schema, factory) : TypeCompiler.Compile(schema);
}

/** The validator of `schema` from its check generated ahead of time, as TypeCompiler.Compile makes it. */
export function aotCheck<T extends TSchema>(schema: T, factory: CheckFactory): TypeCheck<T> {
  return new TypeCheck(schema, [], factory(noKind, format, Hash), '');
}

/** Never called: a check that would call it is not generated ahead. */
function noKind(): boolean {
  return false;
}

/** As TypeCompiler.Compile's: a string format is checked by the format registered for it. */
function format(name: string, value: unknown): boolean {
  return FormatRegistry.Get(name)?.(value as string) ?? false;
}
