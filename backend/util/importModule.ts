/** The loader's import(), when Wick runs from its CLI bundle (backend/util/compileCache.ts). */
declare const __wickImport: ((specifier: string) => Promise<unknown>) | undefined;

/**
 * import() for Wick's own code. In the CLI bundle, which V8 may compile from a code cache, an
 * import() of its own would fail (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, nodejs/node#43663): the
 * loader passes one in. From sources (tests, tsx) it is plain import(). `specifier` is a package
 * name or an absolute file: URL, which resolve the same from either place.
 */
export function importModule<T>(specifier: string): Promise<T> {
  return (
    typeof __wickImport === 'function' ? __wickImport(specifier) : import(specifier)
  ) as Promise<T>;
}
