/** Routes of an application's job and stage pages, and what is not one. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { href, parseRoute } from '../../webview/router.js';

test('job and stage routes parse and print back', () => {
  assert.deepEqual(parseRoute('#/app/app-1/job/3'), { name: 'job', appId: 'app-1', jobId: 3 });
  assert.deepEqual(parseRoute('#/app/app-1/stage/4/1'), {
    name: 'stage',
    appId: 'app-1',
    stageId: 4,
    attemptId: 1,
  });
  for (const hash of ['#/app/app-1/job/3', '#/app/app-1/stage/4/1', '#/app/app%2F2/job/0'])
    assert.equal(href(parseRoute(hash)), hash);
});

test('a bad job or stage route is not found, by the hash given', () => {
  for (const hash of [
    '#/app/app-1/job/x',
    '#/app/app-1/job/-1',
    '#/app/app-1/job/1/2',
    '#/app/app-1/stage/4',
    '#/app/app-1/stage/4/1/9',
    '#/app/app-1/task/1',
    '#/app/app-1/job/12345678901',
  ])
    assert.deepEqual(parseRoute(hash), { name: 'notFound', hash }, hash);
});
