/**
 * Validators compiled ahead of time, by name (a message's type, or `rpc.Envelope` and the like):
 * each a factory of TypeBox's generated check (TypeCompiler.Code), which compiledCheck.ts calls.
 *
 * Run from source (tests, benchmarks, tsx) this module is empty, and every validator is compiled
 * on its first use. In a bundle, scripts/build.mjs replaces it with the code generated from the
 * same sources (aotChecksModule.ts), so that a Wick process starts without compiling any.
 */
export type CheckFactory = (
  kind: (kind: string, instance: number, value: unknown) => boolean,
  format: (format: string, value: unknown) => boolean,
  hash: (value: unknown) => bigint,
) => (value: unknown) => boolean;

export const aotChecks: Readonly<Record<string, CheckFactory>> = {};
