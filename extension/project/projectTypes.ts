/**
 * Makes `import { WickContext } from 'wick'` and Node's globals type-check in a user's folder,
 * offline and matching the Wick that will run the job: the declarations the extension ships
 * (dist/types, scripts/build.mjs) are copied into <folder>/.wick/types (a folder that ignores
 * itself in git: the extension writes it again for whoever opens the folder), and tsconfig.json
 * points there — written when there is none, else edited in place, comments and all.
 */
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyEdits, type JSONPath, modify, type ParseError, parse } from 'jsonc-parser';

export const TYPES_DIR = '.wick/types';
const WICK_TYPES = `./${TYPES_DIR}/wick/index.d.ts`;

/** The compiler options a new job folder gets: Node 20, ES modules as `wick submit` bundles them. */
export const NEW_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'ESNext',
    moduleResolution: 'Bundler',
    strict: true,
    noEmit: true,
    allowJs: true,
    skipLibCheck: true,
    typeRoots: ['./node_modules/@types', `./${TYPES_DIR}`],
    types: ['node'],
    paths: {
      wick: [WICK_TYPES],
      'undici-types': [`./${TYPES_DIR}/undici-types/index.d.ts`],
    },
  },
};

export interface SetUpResult {
  /** What was written, relative to the folder, for the message that says so. */
  written: string[];
}

/** Copies the shipped types from `shipped` (dist/types) and points the folder's tsconfig at them. */
export async function setUpProjectTypes(folder: string, shipped: string): Promise<SetUpResult> {
  await mkdir(join(folder, '.wick'), { recursive: true });
  await writeFile(join(folder, '.wick', '.gitignore'), '# Written by the Wick extension.\n*\n');
  await cp(shipped, join(folder, TYPES_DIR), { recursive: true, force: true });
  const written = [`${TYPES_DIR}/`];
  const tsconfig = join(folder, 'tsconfig.json');
  let text: string | undefined;
  try {
    text = await readFile(tsconfig, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const next =
    text === undefined ? `${JSON.stringify(NEW_TSCONFIG, null, 2)}\n` : pointAtWickTypes(text);
  if (next !== text) {
    await writeFile(tsconfig, next);
    written.push('tsconfig.json');
  }
  return { written };
}

/**
 * An existing tsconfig.json, edited to find Wick's types and Node's: the `wick` path, a type root
 * for .wick/types (after the folder's own node_modules/@types, which win), and "node" in `types`
 * when the file restricts them. Throws, naming the file's problem, if it is not JSON with comments.
 */
export function pointAtWickTypes(text: string): string {
  const errors: ParseError[] = [];
  const config = parse(text, errors, { allowTrailingComma: true }) as {
    compilerOptions?: { paths?: Record<string, string[]>; typeRoots?: string[]; types?: string[] };
  };
  if (errors.length > 0 || typeof config !== 'object' || config === null) {
    throw new Error(
      `tsconfig.json is not valid JSON (error ${errors[0]?.error ?? 'at the top'} at offset ${errors[0]?.offset ?? 0}): fix it, then run Wick: Set Up Types again`,
    );
  }
  const options = config.compilerOptions ?? {};
  const edits: [JSONPath, unknown][] = [];
  const paths = options.paths ?? {};
  if (!paths.wick?.includes(WICK_TYPES))
    edits.push([['compilerOptions', 'paths', 'wick'], [WICK_TYPES]]);
  if (!paths['undici-types'])
    edits.push([
      ['compilerOptions', 'paths', 'undici-types'],
      NEW_TSCONFIG.compilerOptions.paths['undici-types'],
    ]);
  const roots = options.typeRoots;
  if (roots === undefined)
    edits.push([['compilerOptions', 'typeRoots'], NEW_TSCONFIG.compilerOptions.typeRoots]);
  else if (!roots.some((r) => r.replace(/\/$/, '').endsWith(TYPES_DIR)))
    edits.push([
      ['compilerOptions', 'typeRoots'],
      [...roots, `./${TYPES_DIR}`],
    ]);
  if (options.types !== undefined && !options.types.includes('node'))
    edits.push([
      ['compilerOptions', 'types'],
      [...options.types, 'node'],
    ]);
  let out = text;
  for (const [path, value] of edits)
    out = applyEdits(
      out,
      modify(out, path, value, { formattingOptions: { insertSpaces: true, tabSize: 2 } }),
    );
  return out;
}
