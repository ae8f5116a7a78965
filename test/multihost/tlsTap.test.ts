/**
 * A tap on the wire between hosts: the user's client-mode driver advertises the address of a
 * fourth host, where a TCP proxy records every byte both ways and passes it on, so that every
 * executor's connection to the driver (its tasks, the file shipped with --files, each task's
 * result) crosses the tap. With TLS (the default) the recording holds no plaintext of the file,
 * of a result, or of the cluster secret; with wick.ssl.enabled=false the same run shows both the
 * file and the result in the clear, so that the tap is seen to work.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { repoRoot } from '../helpers/cli.js';
import { type Hosts, hostsUnavailable, startHosts, wickInOwnTmp } from '../helpers/hosts.js';

const DRIVER_PORT = 7091;

const APP = `
import { readFileSync } from 'node:fs';
import { WickContext, WickFiles } from 'wick';
const wc = await WickContext.create({ appName: 'tap' });
// The result: the shipped file's text, reversed, four times (one per task).
const rows = await wc
  .parallelize([1, 2, 3, 4], 4)
  .map(() => readFileSync(WickFiles.get('shipped.txt'), 'utf8').trim().split('').reverse().join(''))
  .collect();
console.log(\`RESULT \${rows.join(' ')}\`);
await wc.stop();
`;

async function runThroughTap(
  t: TestContext,
  ssl: boolean,
): Promise<{ recorded: Buffer; fileText: string; result: string; net: Hosts }> {
  mkdirSync(join(repoRoot, '.wick-test'), { recursive: true });
  const dir = mkdtempSync(join(repoRoot, '.wick-test', 'mh-tap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const record = join(dir, 'tap.bin');
  const conf: Record<string, string> = ssl ? {} : { 'wick.ssl.enabled': 'false' };

  const net = await startHosts(t, ['master', 'w1', 'user', 'tap']);
  const master = await net.host('master').startMaster({ conf });
  await net.host('w1').startWorker(master.url, { cores: 2, conf });
  const user = net.host('user');
  const tap = net.host('tap');
  const proxy = tap.spawn(process.execPath, [
    join(repoRoot, 'test', 'fixtures', 'tapProxy.mjs'),
    tap.address,
    String(DRIVER_PORT),
    user.address,
    String(DRIVER_PORT),
    record,
  ]);
  await proxy.waitForStderr(/listening/);

  const fileText = `shipped-${randomBytes(12).toString('hex')}`;
  const result = fileText.split('').reverse().join('');
  const sslConf = ssl ? [] : ['--conf', 'wick.ssl.enabled=false'];
  const submit = wickInOwnTmp(user, { 'app.ts': APP, 'shipped.txt': `${fileText}\n` }, [
    'submit',
    '--master',
    master.url,
    '--executor-cores',
    '1',
    '--executor-memory',
    '128m',
    '--files',
    '/tmp/app/shipped.txt',
    '--conf',
    `wick.driver.host=${tap.address}`,
    '--conf',
    `wick.driver.bindAddress=${user.address}`,
    '--conf',
    `wick.driver.port=${DRIVER_PORT}`,
    ...sslConf,
    '/tmp/app/app.ts',
  ]);
  const end = await submit.closed;
  assert.equal(end.code, 0, submit.stderr);
  assert.match(submit.stdout, new RegExp(`RESULT ${result} ${result} ${result} ${result}`));
  return { recorded: readFileSync(record), fileText, result, net };
}

/**
 * Whether `text` crossed the tap as it is, or in base64 from its first byte (as a file's bytes
 * go in a frame): the encoding of its longest prefix of whole 3-byte groups.
 */
function contains(recorded: Buffer, text: string): boolean {
  const whole = text.length - (text.length % 3);
  const base64 = Buffer.from(text.slice(0, whole)).toString('base64');
  return recorded.includes(Buffer.from(text)) || recorded.includes(Buffer.from(base64));
}

test('through a tap between hosts, TLS shows no file, result or secret; plaintext shows them', {
  skip: hostsUnavailable(),
  timeout: 300_000,
}, async (t) => {
  await t.test('with TLS (the default)', async (t) => {
    const { recorded, fileText, result, net } = await runThroughTap(t, true);
    // The executors' connections went through the tap: tasks, the file and the results.
    assert.ok(recorded.length > 4096, `the tap carried ${recorded.length} bytes`);
    // A TLS 1.3 record stream: handshake records (0x16 0x03 0x01) open it.
    assert.ok(
      recorded.includes(Buffer.from([0x16, 0x03, 0x01])),
      'a TLS ClientHello crossed the tap',
    );
    assert.ok(!contains(recorded, fileText), 'the shipped file crossed in the clear');
    assert.ok(!contains(recorded, result), "a task's result crossed in the clear");
    assert.ok(!contains(recorded, net.secret), 'the cluster secret crossed in the clear');
    assert.ok(
      !recorded.includes(Buffer.from('"jsonrpc"')),
      'a JSON-RPC frame crossed in the clear',
    );
  });
  await t.test('with wick.ssl.enabled=false the tap reads them', async (t) => {
    const { recorded, fileText, result } = await runThroughTap(t, false);
    assert.ok(contains(recorded, fileText), 'the shipped file, in the clear');
    assert.ok(contains(recorded, result), "a task's result, in the clear");
  });
});
