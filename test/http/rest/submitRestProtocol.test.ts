/**
 * Spark's REST protocol messages, checked and shaped without a server: what a request must have,
 * every bound, and the responses' fields in Spark's order without nulls.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createSubmissionResponse,
  errorResponse,
  LIMITS,
  parseCreateSubmission,
  SubmitRestProtocolError,
  submissionStatusResponse,
} from '../../../backend/http/rest/submitRestProtocol.js';

const base = {
  action: 'CreateSubmissionRequest',
  clientSparkVersion: '3.5.1',
  appResource: 'file:///srv/apps/app.ts',
  sparkProperties: { 'spark.app.name': 'x' },
};
const parse = (over: Record<string, unknown>) =>
  parseCreateSubmission(JSON.stringify({ ...base, ...over }));

test("a request in Spark's shape is read: file: URLs and paths, Spark's names, unknown fields and properties named", () => {
  const r = parse({
    appArgs: ['a'],
    environmentVariables: { SPARK_ENV_LOADED: '1' },
    sparkProperties: { 'spark.app.name': 'x', 'spark.executor.memory': '2g', 'spark.bogus': '1' },
    somethingNew: true,
  });
  assert.equal(r.appPath, '/srv/apps/app.ts');
  assert.deepEqual(r.appArgs, ['a']);
  assert.deepEqual(r.environmentVariables, { SPARK_ENV_LOADED: '1' });
  assert.deepEqual(r.unknownProperties, ['spark.bogus']);
  assert.deepEqual(r.unknownFields, ['somethingNew']);
  assert.equal(parse({ appResource: '/a b/app.js' }).appPath, '/a b/app.js');
  assert.equal(parse({ appResource: 'file:///a%20b/app.js' }).appPath, '/a b/app.js');
  assert.equal(parse({ appResource: 'file://localhost/app.js' }).appPath, '/app.js');
  assert.deepEqual(parse({ appArgs: null, environmentVariables: null }).appArgs, []);
});

test('each refusal names the field and what was expected', () => {
  const refused = (over: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => parse(over),
      (err: Error) => {
        assert.ok(err instanceof SubmitRestProtocolError);
        assert.match(err.message, message);
        return true;
      },
    );
  refused(
    { appResource: 'file://other-host/app.js' },
    /'appResource' names another host \(other-host\)/,
  );
  refused({ clientSparkVersion: 3 }, /'clientSparkVersion' must be a string, got a number/);
  refused(
    { clientSparkVersion: 'x'.repeat(LIMITS.clientSparkVersion + 1) },
    /'clientSparkVersion' is 101 characters long/,
  );
  refused({ sparkProperties: [] }, /'sparkProperties' must be an object of strings, got an array/);
  refused(
    { sparkProperties: { 'spark.app.name': 'x', 'spark.driver.cores': 'two' } },
    /property 'spark\.driver\.cores'.*"two"/,
  );
  refused(
    { sparkProperties: { 'spark.app.name': 'x', 'spark.ssl.keyStore': '/k' } },
    /property 'spark\.ssl\.keyStore'.*PEM/,
  );
  refused({ sparkProperties: { 'spark.app.name': ' ' } }, /'spark\.app\.name' is missing/);
  refused(
    { sparkProperties: { 'spark.app.name': 'x', ['k'.repeat(257)]: 'v' } },
    /of field 'sparkProperties' must be 1 to 256 characters/,
  );
  refused(
    {
      sparkProperties: Object.fromEntries([
        ['spark.app.name', 'x'],
        ...Array.from({ length: 1000 }, (_, i) => [`k${i}`, 'v']),
      ]),
    },
    /'sparkProperties' has 1001 entries, more than the 1000 allowed/,
  );
  refused(
    { environmentVariables: { '1X': 'v' } },
    /key "1X" of field 'environmentVariables' must be a name of letters/,
  );
  refused(
    { environmentVariables: { X: 'v'.repeat(LIMITS.environmentValue + 1) } },
    /'environmentVariables\.X' is 65537 characters long/,
  );
  refused({ appArgs: ['x'.repeat(LIMITS.appArg + 1)] }, /'appArgs\[0\]' is 65537 characters long/);
  refused({ message: 1 }, /'message' must be a string/);
});

test("responses: Spark's fields, alphabetical, without nulls", () => {
  const created = createSubmissionResponse({
    success: true,
    message: 'm',
    submissionId: 'driver-1',
    unknownFields: [],
  });
  assert.deepEqual(Object.keys(created), [
    'action',
    'message',
    'serverSparkVersion',
    'submissionId',
    'success',
  ]);
  const status = submissionStatusResponse({ submissionId: 'd', success: false });
  assert.deepEqual(Object.keys(status), [
    'action',
    'serverSparkVersion',
    'submissionId',
    'success',
  ]);
  assert.deepEqual(Object.keys(errorResponse('bad', 'v1')), [
    'action',
    'highestProtocolVersion',
    'message',
    'serverSparkVersion',
  ]);
});
