import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { distFile } from '../util/paths.js';

/** What the web UI serves with the dashboard page (backend/shared/dashboardPage.ts): its bundle and nonces. */

export function newNonce(): string {
  return randomBytes(18).toString('base64');
}

/** The bundle's files, read once: dist/webview.js and dist/webview.css. */
export async function loadDashboardAssets(): Promise<{ js: Buffer; css: Buffer } | undefined> {
  try {
    const [js, css] = await Promise.all([
      readFile(distFile('webview.js')),
      readFile(distFile('webview.css')),
    ]);
    return { js, css };
  } catch {
    return undefined;
  }
}
