import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';

/**
 * Compiles shipped function sources inside an executor. Each function gets `require` and
 * `__wickImport` bound to the application's folder, so that the modules it loads resolve as they
 * would next to the application. Compiled functions are cached by source: the tasks of one job
 * ship the same few functions many times.
 */
export class FunctionCompiler {
  private readonly cache = new Map<string, (...args: unknown[]) => unknown>();
  private readonly require: NodeRequire;
  private readonly importer: (specifier: string) => Promise<unknown>;

  constructor(appDir: string) {
    this.require = createRequire(join(appDir, 'wick-app.js'));
    this.importer = (specifier: string) => {
      if (specifier.startsWith('node:') || this.isBuiltin(specifier)) return import(specifier);
      return import(pathToFileURL(this.require.resolve(specifier)).href);
    };
  }

  compile(source: string): (...args: unknown[]) => unknown {
    let fn = this.cache.get(source);
    if (!fn) {
      const factory = vm.compileFunction(
        `return (${source});`,
        ['require', '__wickImport', '__name', '__require'],
        { filename: 'wick-task-function.js' },
      ) as (
        req: NodeRequire,
        imp: (s: string) => Promise<unknown>,
        name: typeof keepName,
        esbuildRequire: NodeRequire,
      ) => (...args: unknown[]) => unknown;
      fn = factory(this.require, this.importer, keepName, this.require);
      this.cache.set(source, fn);
    }
    return fn;
  }

  private isBuiltin(specifier: string): boolean {
    try {
      return this.require.resolve(specifier) === specifier;
    } catch {
      return false;
    }
  }
}

/**
 * esbuild's keepNames helper: code run through tsx (or bundled with keepNames) wraps each named
 * inner function in `__name(fn, "name")`, so a shipped function's source may call it. (Its other
 * helper that shipped code may call, `__require`, is what an ES module bundle such as `wick submit`
 * makes of `require`: functions get `require` under that name too.)
 */
function keepName<F>(fn: F, value: string): F {
  return Object.defineProperty(fn, 'name', { value, configurable: true });
}
