import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

/**
 * The layers of docs/architecture.md, held by the import graph: every relative import (static,
 * dynamic, `import type` and `export … from` alike: a type is a dependency too) of every source
 * file under backend/, extension/ and webview/ must follow an allowed edge, and no two folders may
 * import each other, directly or around a loop.
 */

const root = resolve(import.meta.dirname, '..');

/** A unit: backend/<folder>, extension or webview, or one of the single files named in RULES. */
type Unit = string;

const pure = ['backend/protocol', 'backend/shared'];
const base = ['backend/util', 'backend/conf', ...pure];

/** What each unit may import, besides itself. A single file listed here is a unit of its own. */
const RULES: Record<Unit, readonly Unit[]> = {
  'backend/util': ['package.json'],
  'backend/conf': ['backend/util'],
  'backend/protocol': ['backend/util'],
  'backend/shared': ['backend/protocol'],
  // The transport knows its own messages (the handshake, the verifier) and no other protocol.
  'backend/rpc': ['backend/util', 'backend/conf', 'backend/protocol:rpc'],
  'backend/client': [...base, 'backend/rpc'],
  // Reading the log files of a work dir: the worker serves them over RPC, its web UI over HTTP.
  'backend/logs': ['backend/util', 'backend/conf', 'backend/protocol'],
  'backend/http': [
    ...base,
    'backend/rpc',
    'backend/client',
    'backend/logs',
    'backend/appstatus',
    'backend/history',
    'webview/protocol.ts',
  ],
  // Files offered and fetched by content: the driver's code and added files, cluster-mode uploads.
  'backend/files': [...base, 'backend/rpc'],
  // Map output files and their block server: executors serve them, and so does a worker's
  // external shuffle service.
  'backend/shuffle': [...base, 'backend/rpc'],
  // Event logs as files: written by a driver, read by the history and the master's web UI.
  'backend/eventlog': ['backend/util', 'backend/conf', ...pure],
  // An application's jobs, stages and tasks built from its listener events, and the source the
  // /api/v1 routes read: the master builds stores from reports, a history server from event logs.
  'backend/appstatus': ['backend/util', 'backend/conf', ...pure, 'backend/eventlog'],
  // The history service: the applications of an event log folder, listed, loaded and cleaned.
  'backend/history': ['backend/util', 'backend/conf', ...pure, 'backend/eventlog'],
  'backend/master': [...base, 'backend/rpc', 'backend/files', 'backend/appstatus'],
  'backend/worker': [...base, 'backend/rpc', 'backend/logs', 'backend/files', 'backend/shuffle'],
  'backend/app': [
    ...base,
    'backend/rpc',
    'backend/client',
    'backend/files',
    'backend/shuffle',
    'backend/eventlog',
  ],
  'backend/submit': [...base, 'backend/rpc', 'backend/client', 'backend/app', 'backend/files'],
  'backend/launcher': [...base, 'backend/rpc', 'backend/client'],
  'backend/agent': [
    ...base,
    'backend/rpc',
    'backend/client',
    'backend/submit',
    'backend/launcher',
    // The local cluster's past runs, from their event logs (the Applications view after a reload).
    'backend/eventlog',
    'backend/history',
    'backend/agent/protocol.ts',
  ],
  // The composition root: it may wire anything of the backend.
  'backend/cli': [
    ...base,
    'backend/rpc',
    'backend/client',
    'backend/http',
    'backend/logs',
    'backend/appstatus',
    'backend/eventlog',
    'backend/master',
    'backend/worker',
    'backend/files',
    'backend/shuffle',
    'backend/app',
    'backend/submit',
    'backend/launcher',
    'backend/agent',
    'backend/agent/protocol.ts',
    'backend/eventlog',
    'backend/history',
    'package.json',
  ],
  'backend/agent/protocol.ts': [...pure],
  // The extension talks to the agent only: its protocol, and pure code shared with the backend.
  extension: ['backend/agent/protocol.ts', ...pure, 'webview/protocol.ts'],
  'webview/protocol.ts': [...pure],
  webview: [...pure, 'webview/protocol.ts'],
};

/** The files of protocol/ that rpc/ may import: the definitions' machinery and its own messages. */
const RPC_OWN_PROTOCOL = new Set([
  'backend/protocol/registry.ts',
  'backend/protocol/rpc.ts',
  'backend/protocol/errors.ts',
  'backend/protocol/base64.ts',
  // How a schema becomes its validator (compiled now, or generated ahead by the build): they name
  // no message of their own.
  'backend/protocol/compiledCheck.ts',
  'backend/protocol/aotChecks.ts',
]);

function unitOf(file: string): Unit {
  if (file in RULES) return file;
  const parts = file.split('/');
  if (parts[0] === 'backend') return parts.length > 2 ? `backend/${parts[1]}` : file;
  return parts[0] as string;
}

function allows(from: Unit, toFile: string): boolean {
  const to = unitOf(toFile);
  if (to === from) return true;
  const allowed = RULES[from] ?? [];
  if (allowed.includes(to)) return true;
  return allowed.includes('backend/protocol:rpc') && RPC_OWN_PROTOCOL.has(toFile);
}

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return /\.(ts|tsx|mts|cts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Edge {
  from: string;
  to: string;
}

function importEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of ['backend', 'extension', 'webview'].flatMap(sources)) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = relative(root, resolve(root, dirname(file), fileName)).replace(
        /\.(js|mjs|cjs)$/,
        (ext) => ({ '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts' })[ext] ?? ext,
      );
      edges.push({ from: file, to: existing(target) });
    }
  }
  return edges;
}

/** `./x.js` in TypeScript's ESM style names x.ts or x.tsx. */
function existing(target: string): string {
  const tsx = target.replace(/\.ts$/, '.tsx');
  return statSync(join(root, target), { throwIfNoEntry: false }) === undefined &&
    statSync(join(root, tsx), { throwIfNoEntry: false }) !== undefined
    ? tsx
    : target;
}

test('every import follows an edge the layers allow', () => {
  const bad = importEdges()
    .filter((e) => !allows(unitOf(e.from), e.to))
    .map(
      (e) =>
        `${e.from} → ${e.to} (${unitOf(e.from)} may import ${RULES[unitOf(e.from)]?.join(', ') || 'nothing else'})`,
    );
  assert.ok(bad.length === 0, `Imports across forbidden edges:\n  ${bad.join('\n  ')}`);
});

test('no two folders import each other, directly or around a loop', () => {
  const folderOf = (f: string) => {
    const p = f.split('/');
    return p[0] === 'backend' && p.length > 2 ? `backend/${p[1]}` : (p[0] as string);
  };
  const graph = new Map<string, Map<string, string>>();
  for (const e of importEdges()) {
    const a = folderOf(e.from);
    const b = folderOf(e.to);
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    graph.get(a)?.set(b, `${e.from} → ${e.to}`);
  }
  const cycles = stronglyConnected(graph).filter((c) => c.length > 1);
  const shown = cycles.map((c) => {
    const inCycle = new Set(c);
    const edges = c.flatMap((a) =>
      [...(graph.get(a) ?? [])].filter(([b]) => inCycle.has(b)).map(([, eg]) => eg),
    );
    return `${c.join(' ↔ ')}:\n    ${edges.join('\n    ')}`;
  });
  assert.ok(shown.length === 0, `Folders in an import cycle:\n  ${shown.join('\n  ')}`);
});

/**
 * Inside the master (docs/architecture.md): operations/ is the library of what happens to
 * workers, applications and drivers; handlers/ translate messages into its calls through a
 * HandlerContext, never the Master endpoint; the recovery calls operations, not handlers.
 */
const MASTER_RULES: { from: RegExp; notTo: RegExp; why: string }[] = [
  {
    from: /^backend\/master\/handlers\//,
    notTo: /^backend\/master\/(Master|recovery)\.ts$/,
    why: 'a handler gets a HandlerContext, not the Master',
  },
  {
    from: /^backend\/master\/operations\//,
    notTo: /^backend\/master\/(handlers\/|Master\.ts$|recovery\.ts$)/,
    why: 'operations are called by handlers, recovery and timers, and call none of them',
  },
  {
    from: /^backend\/master\/(recovery|placement)\.ts$/,
    notTo: /^backend\/master\/(handlers\/|Master\.ts$)/,
    why: 'the recovery and placement call operations, not handlers',
  },
];

function masterEdgeProblems(edges: Edge[]): string[] {
  return edges.flatMap((e) =>
    MASTER_RULES.filter((r) => r.from.test(e.from) && r.notTo.test(e.to)).map(
      (r) => `${e.from} → ${e.to} (${r.why})`,
    ),
  );
}

test('inside the master, handlers and operations import only downwards', () => {
  const bad = masterEdgeProblems(importEdges());
  assert.ok(bad.length === 0, `Imports across the master's inner layers:\n  ${bad.join('\n  ')}`);
  assert.deepEqual(
    masterEdgeProblems([
      { from: 'backend/master/handlers/apps.ts', to: 'backend/master/Master.ts' },
      { from: 'backend/master/recovery.ts', to: 'backend/master/handlers/workers.ts' },
      { from: 'backend/master/operations/apps.ts', to: 'backend/master/handlers/context.ts' },
      { from: 'backend/master/handlers/apps.ts', to: 'backend/master/operations/apps.ts' },
    ]).length,
    3,
    'the rules catch what they claim',
  );
});

test('the rules check what they claim: a forbidden edge and a loop are caught', () => {
  assert.equal(allows('backend/master', 'backend/worker/Worker.ts'), false);
  assert.equal(allows('backend/worker', 'backend/master/config.ts'), false);
  assert.equal(allows('backend/rpc', 'backend/protocol/deploy.ts'), false);
  assert.equal(allows('backend/rpc', 'backend/protocol/registry.ts'), true);
  assert.equal(allows('backend/protocol', 'backend/rpc/RpcEnv.ts'), false);
  assert.equal(allows('backend/http', 'backend/master/Master.ts'), false);
  assert.equal(allows('extension', 'backend/agent/Agent.ts'), false);
  assert.equal(allows('extension', 'backend/agent/protocol.ts'), true);
  // Names across processes: the worker and the executor both import protocol/childEnv.ts, which
  // the transport may not; the one assertNever is shared code the extension may import.
  assert.equal(allows('backend/worker', 'backend/protocol/childEnv.ts'), true);
  assert.equal(allows('backend/app', 'backend/protocol/childEnv.ts'), true);
  assert.equal(allows('backend/rpc', 'backend/protocol/childEnv.ts'), false);
  assert.equal(allows('extension', 'backend/shared/assertNever.ts'), true);
  assert.equal(allows('extension', 'backend/util/log.ts'), false);
  // The driver's events are protocol (to leave the driver later); the protocol knows no driver.
  assert.equal(allows('backend/app', 'backend/protocol/listener.ts'), true);
  assert.equal(allows('backend/protocol', 'backend/app/driver/LiveListenerBus.ts'), false);
  const loop = new Map([
    ['a', new Map([['b', '']])],
    ['b', new Map([['c', '']])],
    ['c', new Map([['a', '']])],
    ['d', new Map([['a', '']])],
  ]);
  assert.deepEqual(
    stronglyConnected(loop).map((c) => c.sort()),
    [['a', 'b', 'c'], ['d']],
  );
});

/** Tarjan's strongly connected components, in the order they complete. */
function stronglyConnected(graph: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      out.push(c);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}
