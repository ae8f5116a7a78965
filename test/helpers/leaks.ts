import assert from 'node:assert/strict';
import { after } from 'node:test';
import { Peer } from './peer.js';

const LEAKY = new Set(['TCPSocketWrap', 'TCPServerWrap', 'ProcessWrap']);

function leftOpen(): string[] {
  return process.getActiveResourcesInfo().filter((r) => LEAKY.has(r));
}

/**
 * Checks, once every test of the file has run its cleanup, that no peer process is left and
 * this process holds no socket, server or child process. Sockets close a tick or two after
 * destroy(), so it lets the event loop turn a few times before it looks.
 */
export function checkNothingLeftRunning(): void {
  after(async () => {
    assert.deepEqual(
      Peer.running().map((p) => p.address || `pid ${p.pid}`),
      [],
      'peer processes left running',
    );
    for (let i = 0; i < 50 && leftOpen().length > 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(leftOpen(), [], 'handles left open in the test process');
  });
}
