import { conf, define } from './WickConf.js';

/** How a worker confines the processes of applications (worker/sandbox/). */
export type SandboxMode = 'auto' | 'bwrap' | 'none';

const MODES: readonly SandboxMode[] = ['auto', 'bwrap', 'none'];

export function parseSandboxMode(raw: string): SandboxMode {
  const v = raw.trim().toLowerCase();
  if ((MODES as readonly string[]).includes(v)) return v as SandboxMode;
  throw new Error(`expected one of ${MODES.join(', ')}, got "${raw}"`);
}

export const SandboxConf = {
  mode: define(
    'wick.executor.sandbox',
    'auto',
    "How a worker confines the executors and cluster-mode drivers it starts: `bwrap` runs each in bubblewrap (its own mount and PID namespaces: the system, Node and Wick read-only, its own dirs read-write, nothing else; the worker refuses to start without a usable bwrap), `none` runs them open as the worker's user (a loud warning at start), `auto` (default) confines with bwrap when it works here and otherwise runs open with that warning, naming how to install it. A worker setting: an application cannot choose it. See docs/security.md, 'What an application's code can see'.",
    parseSandboxMode,
  ),
  readOnlyPaths: conf.string(
    'wick.executor.sandbox.readOnlyPaths',
    '',
    'Comma-separated absolute paths shown read-only, at the same place, inside every confined process: the code or the interpreter of an executor written in another language that lives outside the system dirs and the Wick install (e.g. /opt/myapp,/home/alice/venv).',
  ),
};
