import { readFile, writeFile } from 'node:fs/promises';
import { parse } from 'acorn';
import { BINDING_FOOTER, ENTRY_SCOPE_SUFFIX } from '../util/shippedCode.js';

/**
 * Writes, beside the compiled entry module, a module of its imports alone (see ENTRY_SCOPE_SUFFIX):
 * what a function written in the entry may use of what the entry imported, on an executor that
 * must not run the entry itself. Its imports are the entry's, word for word, so they resolve to
 * the same modules from the same folder.
 */
export async function writeEntryScope(compiledEntry: string): Promise<string> {
  const text = await readFile(compiledEntry, 'utf8');
  const ast = parse(text, { ecmaVersion: 'latest', sourceType: 'module' });
  const imports = ast.body
    .filter((n) => n.type === 'ImportDeclaration')
    .map((n) => text.slice(n.start, n.end));
  const scope = compiledEntry.replace(/\.mjs$/, ENTRY_SCOPE_SUFFIX);
  await writeFile(scope, [...imports, BINDING_FOOTER, ''].join('\n'));
  return scope;
}
