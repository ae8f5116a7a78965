/** The job page's DAG layout: columns after parents, edges within the job, cycles survived. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layoutDag } from '../../../webview/status/dagLayout.js';

test('a join: two map stages in the first column, their shuffle next, the result last', () => {
  const l = layoutDag([
    { stageId: 4, parentIds: [3] },
    { stageId: 3, parentIds: [1, 2] },
    { stageId: 2, parentIds: [] },
    { stageId: 1, parentIds: [] },
  ]);
  assert.deepEqual(
    l.nodes.map((n) => [n.stageId, n.column, n.row]),
    [
      [1, 0, 0],
      [2, 0, 1],
      [3, 1, 0],
      [4, 2, 0],
    ],
  );
  assert.deepEqual(l.edges.map((e) => `${e.from}-${e.to}`).sort(), ['1-3', '2-3', '3-4']);
  assert.deepEqual([l.columns, l.rows], [3, 2]);
});

test('a stage goes after its furthest parent; parents outside the job draw no edge', () => {
  const l = layoutDag([
    { stageId: 0, parentIds: [99] },
    { stageId: 1, parentIds: [0] },
    { stageId: 2, parentIds: [0, 1, 1] },
  ]);
  assert.deepEqual(
    l.nodes.map((n) => n.column),
    [0, 1, 2],
  );
  assert.deepEqual(
    l.edges.map((e) => `${e.from}-${e.to}`),
    ['0-1', '0-2', '1-2'],
    'each edge once',
  );
});

test('a cycle (a bad report) is laid out without hanging, and no stage is lost', () => {
  const l = layoutDag([
    { stageId: 0, parentIds: [1] },
    { stageId: 1, parentIds: [0] },
  ]);
  assert.equal(l.nodes.length, 2);
  assert.equal(l.edges.length, 2);
});

test('no stages: an empty layout', () => {
  assert.deepEqual(layoutDag([]), { nodes: [], edges: [], columns: 0, rows: 0 });
});
