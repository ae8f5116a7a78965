/** The panel's in-memory route: kept in the webview's state, reported once shown, bounded. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryNavigator, readState } from '../../webview/navigation.js';

function fakeApi(initial?: unknown) {
  let state = initial;
  return {
    getState: () => state,
    setState: (s: unknown) => {
      state = s;
    },
    get state() {
      return state;
    },
  };
}

test('a route survives the page: saved on each move, found again by a new page', () => {
  const api = fakeApi();
  const reported: string[] = [];
  const nav = new MemoryNavigator(api, (h) => reported.push(h));
  assert.equal(nav.hash, '#/');
  let changes = 0;
  nav.subscribe(() => changes++);
  nav.go('#/workers');
  nav.go('#/workers');
  assert.equal(changes, 1, 'the same route again is no move');
  assert.deepEqual(reported, [], 'reported once the page shows it, not before');
  nav.shown();
  assert.deepEqual(reported, ['#/workers']);
  nav.rememberScroll(120.4);
  const again = new MemoryNavigator(api, () => {});
  assert.equal(again.hash, '#/workers');
  assert.equal(again.scroll(), 120);
  nav.go('apps');
  assert.equal(nav.hash, '#apps', 'a hash without # gets one');
});

test('a saved state that is not well formed is ignored, field by field', () => {
  assert.deepEqual(readState(undefined), {});
  assert.deepEqual(readState('x'), {});
  assert.deepEqual(readState({ route: 42, scroll: { '#/': -1, '#/apps': 10, x: 'no' } }), {
    scroll: { '#/apps': 10 },
  });
  assert.deepEqual(readState({ route: 'no-hash' }), {});
  assert.deepEqual(readState({ route: `#/${'a'.repeat(3000)}` }), {});
  const nav = new MemoryNavigator(fakeApi({ route: '#/app/x' }), () => {});
  nav.go(`#/${'a'.repeat(5000)}`);
  assert.equal(nav.hash, '#/', 'an overlong route falls back to the overview');
});

test('the scroll memory keeps the most recent routes only', () => {
  const api = fakeApi();
  const nav = new MemoryNavigator(api, () => {});
  for (let i = 0; i < 80; i++) {
    nav.go(`#/app/a${i}`);
    nav.rememberScroll(i);
  }
  const scroll = readState(api.state).scroll ?? {};
  assert.equal(Object.keys(scroll).length, 50);
  assert.equal(scroll['#/app/a79'], 79);
  assert.equal(scroll['#/app/a0'], undefined);
});
