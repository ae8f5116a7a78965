import { rewriteStartupBlock } from '../util/startupBlocks.js';

/**
 * The cluster secret, where a command was given it in the open: WICK_AUTH_SECRET, or
 * `--conf wick.authenticate.secret=…` (spark.* too). Every Wick process masks it with '*' in what
 * /proc/<pid>/environ and /proc/<pid>/cmdline show, first thing, while keeping its value for
 * itself (process.env, process.argv). What is left open is what came before: the moments before
 * the mask, and whatever started the process (a shell's history, a unit file, a parent).
 */
export interface StartupSecrets {
  /** Where it was given: 'environment', 'command line', both, or none. */
  readonly given: readonly ('environment' | 'command line')[];
  /** Why it could not be masked (not Linux; /proc/self/mem not writable); undefined when it was. */
  readonly unmasked?: string;
}

const SECRET_SETTING = /^(?:--conf=)?(?:wick|spark)\.authenticate\.secret=(.*)$/s;

/** The secret values a command line carries in `--conf` pairs. */
export function secretsInArgs(args: readonly string[]): string[] {
  return args.flatMap((a) => {
    const m = SECRET_SETTING.exec(a);
    return m?.[1] ? [m[1]] : [];
  });
}

/** Each occurrence of any of `secrets` in `entry` overwritten with '*'; undefined when none. */
function masked(entry: Buffer, secrets: readonly Buffer[]): Buffer | undefined {
  let out: Buffer | undefined;
  for (const s of secrets) {
    for (let at = entry.indexOf(s); at !== -1; at = entry.indexOf(s, at + s.length)) {
      out ??= Buffer.from(entry);
      out.fill('*', at, at + s.length);
    }
  }
  return out;
}

/**
 * What maskStartupSecrets found and did, kept on the global object: dist/wick.cjs masks before it
 * loads the CLI bundle (entry.cts), and the commands in that bundle, with their own copy of this
 * module, read it for their warnings.
 */
const FOUND = Symbol.for('wick.startupSecrets');
type WithFound = { [FOUND]?: StartupSecrets };

function record(found: StartupSecrets): StartupSecrets {
  (globalThis as WithFound)[FOUND] = found;
  return found;
}

/** What maskStartupSecrets found and did, for the warnings of the commands that follow. */
export function startupSecrets(): StartupSecrets {
  return (globalThis as WithFound)[FOUND] ?? { given: [] };
}

/** Masks the secret in this process's start-up environment and command line (see above). */
export function maskStartupSecrets(
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv,
): StartupSecrets {
  const fromEnv = env.WICK_AUTH_SECRET || undefined;
  const fromArgs = secretsInArgs(argv);
  const given = [
    ...(fromEnv ? (['environment'] as const) : []),
    ...(fromArgs.length > 0 ? (['command line'] as const) : []),
  ];
  if (given.length === 0) return record({ given });
  const secrets = [...new Set([...(fromEnv ? [fromEnv] : []), ...fromArgs])].map((s) =>
    Buffer.from(s),
  );
  try {
    // Each variable that holds it is set again, which copies it out of the start-up block: the
    // C library's environment (and so process.env and every child's) keeps it whole.
    const moved = new Set<string>();
    for (const [k, v] of Object.entries(env)) {
      if (v !== undefined && secrets.some((s) => v.includes(s.toString()))) {
        env[k] = v;
        moved.add(k);
      }
    }
    rewriteStartupBlock('environ', (entry) => {
      const eq = entry.indexOf('=');
      if (eq <= 0 || !moved.has(entry.subarray(0, eq).toString())) return undefined;
      return masked(entry, secrets);
    });
    // process.argv is Node's copy, and the start-up block only what `ps` shows.
    rewriteStartupBlock('cmdline', (entry) => masked(entry, secrets));
    return record({ given });
  } catch (err) {
    return record({ given, unmasked: (err as Error).message });
  }
}
