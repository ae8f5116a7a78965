/**
 * The driver output the agent pushes: bounded chunks, checked output ids, and a real child's
 * stdout and stderr read whole (multi-byte characters split between writes included).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execa } from 'execa';
import {
  checkOutputId,
  chunkDecoder,
  MAX_DRIVER_OUTPUT_CHUNK,
  OutputTail,
  pipeChildOutput,
  sendInChunks,
} from '../../backend/agent/driverOutput.js';

test('text is sent in chunks of at most MAX_DRIVER_OUTPUT_CHUNK, never splitting a surrogate pair', () => {
  const sent: string[] = [];
  const sink = {
    driverOutput: (_id: string, _s: string, d: string) => sent.push(d),
    driverExited: () => {},
  };
  const text = `${'a'.repeat(MAX_DRIVER_OUTPUT_CHUNK - 1)}😀${'b'.repeat(MAX_DRIVER_OUTPUT_CHUNK * 2)}`;
  sendInChunks(sink, 'o1', 'stdout', text);
  assert.equal(sent.join(''), text);
  assert.ok(sent.every((c) => c.length <= MAX_DRIVER_OUTPUT_CHUNK));
  assert.equal(sent[0], 'a'.repeat(MAX_DRIVER_OUTPUT_CHUNK - 1));
  sent.length = 0;
  sendInChunks(sink, 'o1', 'stdout', '');
  assert.deepEqual(sent, []);
});

test('output ids: absent is fine; a bad one is refused naming it and what is expected', () => {
  assert.equal(checkOutputId(undefined), undefined);
  assert.equal(checkOutputId('a1_B-'), 'a1_B-');
  assert.throws(
    () => checkOutputId('a/b'),
    /outputId "a\/b" is not valid: expected 1 to 64 letters/,
  );
  assert.throws(() => checkOutputId('x'.repeat(65)), /not valid/);
  assert.throws(() => checkOutputId(7), /outputId 7 is not valid/);
});

test("a real child's stdout and stderr arrive whole, then the promise resolves", async () => {
  const child = execa(
    process.execPath,
    [
      '-e',
      `const b = Buffer.from('π≈3.14\\n'); process.stdout.write(b.subarray(0, 1));
       setTimeout(() => { process.stdout.write(b.subarray(1)); process.stderr.write('oops\\n'); }, 20);`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], buffer: false, reject: false },
  );
  const got = { stdout: '', stderr: '' };
  const tail = new OutputTail(8);
  await pipeChildOutput(child, (stream, text) => {
    got[stream] += text;
    tail.add(text);
  });
  await child;
  assert.deepEqual(got, { stdout: 'π≈3.14\n', stderr: 'oops\n' });
  assert.equal(tail.lines(1), 'oops');
});

test('followed chunks (base64) decode to text across a split character', () => {
  const decode = chunkDecoder();
  const b = Buffer.from('é');
  const text =
    decode({ data: b.subarray(0, 1).toString('base64') }) +
    decode({ data: b.subarray(1).toString('base64') });
  assert.equal(text, 'é');
});
