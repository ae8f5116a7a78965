/**
 * Debian's Chromium, headless, for the dashboard's browser tests: one way to launch it, to
 * collect what the page reports (CSP violations, console errors, uncaught exceptions), to save
 * screenshots, and to skip where it is missing (failing instead under CI, which installs it).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(
  fileURLToPath(new URL('../..', import.meta.url)),
  'test-output',
  'screenshots',
);

/** Why the browser tests cannot run on this machine; undefined when they can. */
export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser tests`;

/** Whether the browser tests run here; under CI a missing browser is a failure, not a skip. */
export function chromiumHere(): boolean {
  if (chromiumMissing && process.env.CI) assert.fail(`${chromiumMissing} (.ci/run installs it)`);
  return chromiumMissing === undefined;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** What the page reported against its CSP, its console errors and uncaught exceptions. */
  problems: string[];
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** A fresh profile and its first page, with a 60 s default wait for every locator. */
export async function openBrowser(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'wick-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
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
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return {
    context,
    page,
    problems,
    shot: async (name) => {
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The words of the one progress bar in `scope` ("11/11 (1 failed)"). */
export async function progressText(scope: Locator): Promise<string> {
  return (await scope.locator('.progress-text').textContent()) ?? '';
}
