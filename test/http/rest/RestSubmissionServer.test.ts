/**
 * Spark's REST submission API on a real master with a real worker: a driver created from a JSON
 * request in Spark's shape, its status in Spark's shape, killed; and, unlike Spark's server
 * (CVE-2018-11770), every request without the cluster credential refused before anything is
 * read, malformed or oversized requests answered with an ErrorResponse naming the field, and the
 * server bound where the master binds only.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { resolveClusterAuth } from '../../../backend/rpc/clusterSecret.js';
import { type MasterProcess, startMaster, startWorker } from '../../helpers/cluster.js';
import { within } from '../../helpers/within.js';

const APP = fileURLToPath(new URL('../../fixtures/restDriver.ts', import.meta.url));

interface Answer {
  status: number;
  json: Record<string, unknown>;
}

interface RestMaster extends MasterProcess {
  restUrl: string;
}

async function startRestMaster(
  t: import('node:test').TestContext,
  host = '127.0.0.1',
): Promise<RestMaster> {
  const master = await startMaster(t, {
    host,
    conf: { 'wick.master.rest.enabled': true, 'wick.master.rest.port': 0 },
  });
  const m = await master.waitForStderr(
    /Started REST server for submitting applications on port (\d+)/,
  );
  return Object.assign(master, { restUrl: `http://${host}:${m[1]}` });
}

function secret(): string {
  const auth = resolveClusterAuth(new WickConf());
  assert.equal(auth.mode, 'secret', 'the master made the cluster secret in the default file');
  return (auth as { secret: string }).secret;
}

async function call(
  url: string,
  init: {
    method?: string;
    body?: string;
    token?: string | null;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  const token = init.token === undefined ? secret() : init.token;
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      connection: 'close',
      'content-type': 'application/json;charset=UTF-8',
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { text };
  }
  return { status: res.status, json };
}

function createRequest(over: Record<string, unknown> = {}, args: string[] = []): string {
  return JSON.stringify({
    action: 'CreateSubmissionRequest',
    appArgs: args,
    appResource: `file://${APP}`,
    clientSparkVersion: '3.5.1',
    environmentVariables: { SPARK_ENV_LOADED: '1', REST_TEST_VAR: 'from the request' },
    mainClass: 'org.example.Unused',
    sparkProperties: {
      'spark.app.name': 'rest test',
      'spark.driver.memory': '256m',
      'spark.executor.memory': '300m',
      'spark.driver.supervise': 'false',
      'spark.submit.deployMode': 'cluster',
      'spark.master': 'spark://ignored:6066',
    },
    ...over,
  });
}

async function statusUntil(
  restUrl: string,
  id: string,
  done: (state: string | undefined) => boolean,
): Promise<Answer> {
  for (;;) {
    const r = await call(`${restUrl}/v1/submissions/status/${id}`);
    if (done(r.json.driverState as string | undefined)) return r;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test("a driver created, watched and killed through the REST API, in Spark's shapes", {
  timeout: 240_000,
}, async (t) => {
  const master = await startRestMaster(t);
  const worker = await startWorker(t, master.url, { cores: 2, memory: '1g' });

  // Create: the master compiles the application at appResource and launches its driver.
  const created = await call(`${master.restUrl}/v1/submissions/create`, {
    method: 'POST',
    body: createRequest({ futureField: 1 }, ['one', 'two words']),
  });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  assert.equal(created.json.action, 'CreateSubmissionResponse');
  assert.equal(created.json.success, true, JSON.stringify(created.json));
  assert.deepEqual(created.json.unknownFields, ['futureField']);
  assert.match(String(created.json.message), /Driver successfully submitted as driver-/);
  assert.match(String(created.json.message), /mainClass org\.example\.Unused is not used/);
  assert.equal(typeof created.json.serverSparkVersion, 'string');
  const id = String(created.json.submissionId);
  assert.match(id, /^driver-\d{14}-\d{4}$/);
  // Spark's field order (alphabetical), no nulls.
  assert.deepEqual(Object.keys(created.json), [...Object.keys(created.json)].sort());

  const finished = await within(
    120_000,
    statusUntil(master.restUrl, id, (s) => s === 'FINISHED' || s === 'FAILED' || s === 'ERROR'),
    () => `driver ${id} to end\n${worker.stderr}`,
  );
  assert.equal(finished.status, 200);
  assert.deepEqual(
    {
      action: finished.json.action,
      submissionId: finished.json.submissionId,
      success: finished.json.success,
      driverState: finished.json.driverState,
      workerId: finished.json.workerId,
    },
    {
      action: 'SubmissionStatusResponse',
      submissionId: id,
      success: true,
      driverState: 'FINISHED',
      workerId: worker.workerId,
    },
  );
  assert.match(String(finished.json.workerHostPort), /^127\.0\.0\.1:\d+$/);
  // What reached the driver: its arguments, the request's variable, the settings under Wick's
  // names, this master (not the request's spark.master), the name.
  const out = readFileSync(join(worker.workDir, id, 'stdout'), 'utf8');
  const line = /rest driver (\{.*\})/.exec(out);
  assert.ok(line, out);
  assert.deepEqual(JSON.parse(line[1] as string), {
    args: ['one', 'two words'],
    env: 'from the request',
    name: 'rest test',
    executorMemory: '300m',
    master: master.url,
  });

  // Kill: a driver that waits is RUNNING, then KILLED.
  const waiting = await call(`${master.restUrl}/v1/submissions/create`, {
    method: 'POST',
    body: createRequest({}, ['wait']),
  });
  assert.equal(waiting.json.success, true, JSON.stringify(waiting.json));
  const waitId = String(waiting.json.submissionId);
  await within(
    120_000,
    statusUntil(master.restUrl, waitId, (s) => s === 'RUNNING'),
    `driver ${waitId} to run`,
  );
  await within(
    60_000,
    (async () => {
      for (;;) {
        // RUNNING may be told before the worker has made the driver's stdout file.
        const file = join(worker.workDir, waitId, 'stdout');
        if (existsSync(file) && readFileSync(file, 'utf8').includes('waiting to be killed')) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })(),
    `driver ${waitId} to print that it waits`,
  );
  const killed = await call(`${master.restUrl}/v1/submissions/kill/${waitId}`, { method: 'POST' });
  assert.equal(killed.status, 200);
  assert.deepEqual(
    [killed.json.action, killed.json.submissionId, killed.json.success],
    ['KillSubmissionResponse', waitId, true],
  );
  const after = await within(
    60_000,
    statusUntil(master.restUrl, waitId, (s) => s === 'KILLED'),
    `driver ${waitId} to be KILLED`,
  );
  assert.equal(after.json.driverState, 'KILLED');

  // An id the master never made: found false, in Spark's shape; killing it says so.
  const unknown = await call(`${master.restUrl}/v1/submissions/status/driver-20200101000000-9999`);
  assert.deepEqual([unknown.status, unknown.json.success], [200, false]);
  const unknownKill = await call(
    `${master.restUrl}/v1/submissions/kill/driver-20200101000000-9999`,
    { method: 'POST' },
  );
  assert.deepEqual([unknownKill.status, unknownKill.json.success], [200, false]);
});

test('without the cluster credential every request is refused, and nothing is created or killed', {
  timeout: 180_000,
}, async (t) => {
  const master = await startRestMaster(t);
  const worker = await startWorker(t, master.url, { cores: 1, memory: '1g' });
  const waiting = await call(`${master.restUrl}/v1/submissions/create`, {
    method: 'POST',
    body: createRequest({}, ['wait']),
  });
  assert.equal(waiting.json.success, true, JSON.stringify(waiting.json));
  const id = String(waiting.json.submissionId);
  await within(
    120_000,
    statusUntil(master.restUrl, id, (s) => s === 'RUNNING'),
    `${id} to run`,
  );

  const s = secret();
  const wrong: [string, string | null, Record<string, string>?][] = [
    ['no credential', null],
    ['a wrong secret', 'guess'],
    ['a prefix of the secret', s.slice(0, 7)],
    ['the secret as a cookie, not a header', null, { cookie: `wick_session=${s}` }],
    [
      'the secret as Basic auth',
      null,
      { authorization: `Basic ${Buffer.from(`u:${s}`).toString('base64')}` },
    ],
  ];
  for (const [what, token, headers] of wrong) {
    for (const [method, path, body] of [
      ['POST', '/v1/submissions/create', createRequest()],
      ['POST', `/v1/submissions/kill/${id}`, undefined],
      ['GET', `/v1/submissions/status/${id}`, undefined],
      ['GET', '/', undefined],
      ['GET', '/health', undefined],
      ['GET', '/v9/anything', undefined],
    ] as const) {
      const r = await call(`${master.restUrl}${path}`, { method, token, headers, body });
      assert.equal(r.status, 401, `${what}, ${method} ${path}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.action, 'ErrorResponse', `${what}, ${method} ${path}`);
      assert.match(String(r.json.message), /cluster's credential/);
      assert.equal(r.json.driverState, undefined, 'no status leaks without the credential');
    }
  }
  // Nothing was created, and the driver still runs: asked with the credential, after the refusals.
  const still = await call(`${master.restUrl}/v1/submissions/status/${id}`);
  assert.equal(still.json.driverState, 'RUNNING');
  const json = (await (
    await fetch(`${master.webUiUrl}/json`, {
      headers: { authorization: `Bearer ${s}`, connection: 'close' },
    })
  ).json()) as { activedrivers: { id: string }[]; completeddrivers: { id: string }[] };
  assert.deepEqual(
    [...json.activedrivers, ...json.completeddrivers].map((d) => d.id),
    [id],
    'only the one driver created with the credential exists',
  );
  await call(`${master.restUrl}/v1/submissions/kill/${id}`, { method: 'POST' });
  await within(
    60_000,
    statusUntil(master.restUrl, id, (st) => st === 'KILLED'),
    `${id} killed`,
  );
  assert.ok(worker.isRunning);
});

test('malformed, oversized and misdirected requests get an ErrorResponse naming what is wrong', {
  timeout: 120_000,
}, async (t) => {
  const master = await startRestMaster(t);
  const create = (body: string) =>
    call(`${master.restUrl}/v1/submissions/create`, { method: 'POST', body });
  const cases: [string, string, number, RegExp][] = [
    ['not JSON', '{"action": ', 400, /not JSON/],
    ['an array', '[]', 400, /expected a JSON object/],
    ['no action', JSON.stringify({ appResource: '/x.js' }), 400, /field 'action' is missing/],
    [
      'another action',
      createRequest({ action: 'KillSubmissionRequest' }),
      400,
      /field 'action' must be "CreateSubmissionRequest"/,
    ],
    [
      'no appResource',
      createRequest({ appResource: undefined }),
      400,
      /field 'appResource' is missing/,
    ],
    [
      'an hdfs appResource',
      createRequest({ appResource: 'hdfs://nn/app.jar' }),
      400,
      /field 'appResource' must be an absolute path or a file: URL/,
    ],
    [
      'a relative appResource',
      createRequest({ appResource: 'app.js' }),
      400,
      /field 'appResource'/,
    ],
    [
      'no clientSparkVersion',
      createRequest({ clientSparkVersion: undefined }),
      400,
      /field 'clientSparkVersion' is missing/,
    ],
    [
      'no sparkProperties',
      createRequest({ sparkProperties: undefined }),
      400,
      /field 'sparkProperties' is missing/,
    ],
    [
      'no app name',
      createRequest({ sparkProperties: { 'spark.driver.memory': '1g' } }),
      400,
      /property 'spark\.app\.name' is missing/,
    ],
    [
      'a bad memory',
      createRequest({ sparkProperties: { 'spark.app.name': 'x', 'spark.driver.memory': 'lots' } }),
      400,
      /property 'spark\.driver\.memory' in sparkProperties: .*"lots"/,
    ],
    [
      'a bad boolean',
      createRequest({
        sparkProperties: { 'spark.app.name': 'x', 'spark.driver.supervise': 'maybe' },
      }),
      400,
      /property 'spark\.driver\.supervise'/,
    ],
    [
      'client deploy mode',
      createRequest({
        sparkProperties: { 'spark.app.name': 'x', 'spark.submit.deployMode': 'client' },
      }),
      400,
      /'spark\.submit\.deployMode' must be "cluster"/,
    ],
    [
      'appArgs not an array',
      createRequest({ appArgs: 'a b' }),
      400,
      /field 'appArgs' must be an array of strings, got a string/,
    ],
    [
      'a number in appArgs',
      createRequest({ appArgs: ['a', 2] }),
      400,
      /field 'appArgs\[1\]' must be a string, got a number/,
    ],
    [
      'too many appArgs',
      createRequest({ appArgs: Array(1001).fill('a') }),
      400,
      /field 'appArgs' has 1001 items, more than the 1000 allowed/,
    ],
    [
      'a Wick variable',
      createRequest({ environmentVariables: { WICK_MASTER: 'wick://evil:1' } }),
      400,
      /key "WICK_MASTER" of field 'environmentVariables' must be not one of Wick's own/,
    ],
    [
      'a bad variable name',
      createRequest({ environmentVariables: { 'A=B': '1' } }),
      400,
      /key "A=B" of field 'environmentVariables'/,
    ],
    [
      'a property that is an object',
      createRequest({ sparkProperties: { 'spark.app.name': { x: 1 } } }),
      400,
      /field 'sparkProperties\.spark\.app\.name' must be a string, got a object/,
    ],
  ];
  for (const [what, body, status, message] of cases) {
    const r = await create(body);
    assert.equal(r.status, status, `${what}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.action, 'ErrorResponse', what);
    assert.match(String(r.json.message), message, what);
  }
  // A file the master cannot compile: a CreateSubmissionResponse that says why, and no driver.
  const missing = await create(createRequest({ appResource: '/nonexistent/app.ts' }));
  assert.deepEqual([missing.status, missing.json.success], [200, false]);
  assert.match(
    String(missing.json.message),
    /Cannot read application \/nonexistent\/app\.ts: ENOENT/,
  );

  // Over the body limit: 413, whether announced by Content-Length or streamed without one.
  // Five times: a client still writing when the server answered got EPIPE, not the 413, about
  // one time in two until the server drained refused bodies (boundedBody.ts).
  const big = createRequest({ appArgs: ['x'.repeat(2 * 1024 * 1024)] });
  for (let i = 0; i < 5; i++) {
    const tooBig = await create(big);
    assert.equal(tooBig.status, 413, JSON.stringify(tooBig.json));
    assert.match(String(tooBig.json.message), /larger than the 1048576 bytes allowed/);
  }
  const chunks = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 3; i++) c.enqueue(new TextEncoder().encode('x'.repeat(512 * 1024)));
      c.close();
    },
  });
  const streamed = await fetch(`${master.restUrl}/v1/submissions/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret()}`, connection: 'close' },
    body: chunks,
    duplex: 'half',
  } as RequestInit);
  assert.equal(streamed.status, 413, await streamed.text());

  // Paths and methods, as Spark's ErrorServlet answers them.
  const paths: [string, string, number, RegExp][] = [
    ['GET', '/', 400, /Missing protocol version/],
    ['GET', '/v1', 400, /Missing the \/submissions prefix/],
    ['GET', '/v1/submissions/', 400, /Missing an action/],
    ['GET', '/v2/submissions/create', 468, /Unknown protocol version 'v2'/],
    ['GET', '/v1/submissions/create', 405, /\/create takes POST/],
    ['POST', '/v1/submissions/status/driver-20200101000000-0001', 405, /\/status takes GET/],
    ['POST', '/v1/submissions/kill/', 400, /Submission ID is missing in kill request/],
    ['GET', `/v1/submissions/status/d${'x'.repeat(300)}`, 400, /"dxx+" is not a driver id/],
    // No /health here: this server answers nothing but Spark's API, and that with the credential.
    ['GET', '/health', 468, /Unknown protocol version 'health'/],
  ];
  for (const [method, path, status, message] of paths) {
    const r = await call(`${master.restUrl}${path}`, {
      method,
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.action, 'ErrorResponse');
    assert.match(String(r.json.message), message, `${method} ${path}`);
    if (status === 468) assert.equal(r.json.highestProtocolVersion, 'v1');
  }
  // The master took all of it without harm.
  assert.ok(master.isRunning);
  const ok = await call(`${master.restUrl}/v1/submissions/status/driver-20200101000000-0001`);
  assert.equal(ok.status, 200);
});

test('the REST server binds where the master binds, and only there', {
  timeout: 60_000,
}, async (t) => {
  // 127.0.0.2 is this machine too, but another address: a server bound to it is not on 127.0.0.1.
  const master = await startRestMaster(t, '127.0.0.2');
  const port = Number(new URL(master.restUrl).port);
  assert.equal(new URL(master.restUrl).hostname, '127.0.0.2');
  const ok = await call(
    `http://127.0.0.2:${port}/v1/submissions/status/driver-20200101000000-0001`,
  );
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  const refused = await new Promise<string>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  assert.equal(refused, 'ECONNREFUSED');
});

test('off by default, as in Spark 3; and never started on a cluster without authentication', {
  timeout: 60_000,
}, async (t) => {
  const plain = await startMaster(t);
  // A later event of the master's log, so that the absence below is not read too early.
  const worker = await startWorker(t, plain.url, { cores: 1, memory: '512m' });
  await plain.waitForStderr(new RegExp(`Registering worker ${worker.address}`));
  assert.doesNotMatch(plain.stderr, /REST server/);
  await assert.rejects(
    startMaster(t, {
      conf: {
        'wick.master.rest.enabled': true,
        'wick.master.rest.port': 0,
        'wick.authenticate': false,
      },
    }),
    /wick\.master\.rest\.enabled=true needs authentication/,
  );
});
