/**
 * Every command package.json contributes is registered by the extension: one that is not shows in
 * the command palette and answers "command not found". Read statically from the sources (the
 * extension cannot be loaded outside VS Code); the in-host suite checks the same against
 * vscode.commands.getCommands in a real window.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pkg from '../../package.json' with { type: 'json' };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.ts$/.test(e.name) ? [readFileSync(p, 'utf8')] : [];
  });
}

/**
 * The ids passed as a literal to `registerCommand(`, or to a local wrapper that hands its `id` on
 * to it: one written out (`const cmd = (id: string, …) => vscode.commands.registerCommand(id, …)`)
 * or made by reportingCommand.ts (`const cmd = reportingCommand(host)`).
 */
function registeredIds(texts: string[]): Set<string> {
  const ids = new Set<string>();
  for (const text of texts) {
    const wrappers = [
      ...text.matchAll(
        /const (\w+) = \(\s*(\w+): string[^;]{0,200}?=>\s*(?:vscode\.commands\.)?registerCommand\(\s*\2\b/g,
      ),
      ...text.matchAll(/const (\w+) = reportingCommand\(/g),
    ].map((m) => m[1] as string);
    const callee = ['registerCommand', ...wrappers].join('|');
    for (const m of text.matchAll(new RegExp(`\\b(?:${callee})\\(\\s*['"\`]([^'"\`]+)['"\`]`, 'g')))
      ids.add(m[1] as string);
  }
  return ids;
}

test('every command in contributes.commands is registered in extension/', () => {
  const registered = registeredIds(sources(join(import.meta.dirname, '../../extension')));
  const contributed = pkg.contributes.commands.map((c) => c.command);
  assert.ok(contributed.length > 0, 'package.json contributes commands');
  assert.deepEqual(
    contributed.filter((id) => !registered.has(id)),
    [],
    `contributed but never registered (registered: ${[...registered].join(', ')})`,
  );
});

test('registeredIds reads direct calls and a wrapper, and nothing else', () => {
  const ids = registeredIds([
    `vscode.commands.registerCommand('wick.a', () => 1);
     const cmd = (id: string, fn: () => unknown) =>
       vscode.commands.registerCommand(id, async () => fn());
     cmd('wick.b', () => 2);
     const reported = reportingCommand(d.host);
     reported('wick.e', () => 3);
     executeCommand('wick.c');
     other('wick.d');`,
  ]);
  assert.deepEqual([...ids].sort(), ['wick.a', 'wick.b', 'wick.e']);
});
