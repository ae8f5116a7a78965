/**
 * The external shuffle service across hosts: a master and two workers each on a host of their
 * own, with wick.shuffle.service.enabled (on Spark's port 7337: each host has its own), and
 * WordCount submitted from a fourth. An executor is SIGKILLed between the map and reduce stages:
 * the reducers fetch its outputs from its worker's service on the other host, so the answer is
 * right and no map stage runs again. A worker host cut off instead takes the outputs its service
 * held: those map tasks run again elsewhere.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';

const SERVICE = { 'wick.shuffle.service.enabled': 'true' };
/** A cut-off worker is declared lost 2 s after its last heartbeat. */
const TIMEOUTS = { 'wick.worker.timeout': '2s' };

test('WordCount across hosts with the shuffle service: an executor SIGKILLed between stages costs no map stage', {
  skip: hostsUnavailable(),
  timeout: 180_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const master = await net.host('master').startMaster();
  const w1 = await net.host('w1').startWorker(master.url, { cores: 1, conf: SERVICE });
  const w2 = await net.host('w2').startWorker(master.url, { cores: 1, conf: SERVICE });
  await w1.waitForStderr(/Started the external shuffle service on \S+:7337/);
  await w2.waitForStderr(/Started the external shuffle service on \S+:7337/);

  const driver = net
    .host('user')
    .startWick(['submit', '--master', master.url, 'test/fixtures/apps/shuffle-service-kill.ts']);
  const appId = (await driver.waitForStderr(/app ID (app-\S+)/))[1] as string;
  const line = (re: RegExp) =>
    waitFor(`the driver to print ${re}`, () => re.exec(driver.stdout) ?? undefined, t.signal);
  const outputs = JSON.parse((await line(/MAP OUTPUTS (\[.*\])/))[1] as string) as [
    string,
    string,
  ][];
  const services = [w1, w2].map((w) => `${w.address.split(':')[0]}:7337`);
  for (const [, location] of outputs) {
    assert.ok(services.includes(location), `${location}: a worker's shuffle service`);
  }
  const victim = outputs[0]?.[0] as string;
  // Its worker's log names its process (the hosts share one pid namespace).
  const launched = new RegExp(`Launched executor ${appId}/${victim} as process (\\d+)`);
  const pid = Number(
    await waitFor(
      `executor ${victim}'s process`,
      () => launched.exec(w1.stderr)?.[1] ?? launched.exec(w2.stderr)?.[1],
      t.signal,
    ),
  );
  process.kill(pid, 'SIGKILL');

  await line(new RegExp(`EXECUTOR ${victim} GONE`));
  const result = await line(/RESULT .*/);
  assert.equal(result[0], 'RESULT 101 keys, 20000 in all');
  const stats = JSON.parse((await line(/STATS (\{.*\})/))[1] as string);
  assert.equal(stats.stagesResubmitted, 0, driver.stderr);
  assert.equal(stats.mapStagesRun, 1, driver.stderr);
  assert.doesNotMatch(driver.stderr, /Resubmitting ShuffleMapStage|FetchFailed/);
  const end = await driver.closed;
  assert.equal(end.code, 0, driver.stderr);
});

test('WordCount across hosts with the shuffle service: a worker host cut off after the map stage takes its outputs, which rerun', {
  skip: hostsUnavailable(),
  timeout: 180_000,
}, async (t) => {
  const net = await startHosts(t, ['master', 'w1', 'w2', 'user']);
  const conf = { ...SERVICE, ...TIMEOUTS };
  const master = await net.host('master').startMaster({ conf: TIMEOUTS });
  const workers = {
    w1: await net.host('w1').startWorker(master.url, { cores: 1, conf }),
    w2: await net.host('w2').startWorker(master.url, { cores: 1, conf }),
  };
  const driver = net
    .host('user')
    .startWick(['submit', '--master', master.url, 'test/fixtures/apps/shuffle-service-kill.ts']);
  const line = (re: RegExp) =>
    waitFor(`the driver to print ${re}`, () => re.exec(driver.stdout) ?? undefined, t.signal);
  const outputs = JSON.parse((await line(/MAP OUTPUTS (\[.*\])/))[1] as string) as [
    string,
    string,
  ][];
  // The fixture waits for the loss of the executor that wrote the first output: cut its host.
  const [victim, location] = outputs[0] as [string, string];
  const name = (['w1', 'w2'] as const).find(
    (n) => `${workers[n].address.split(':')[0]}:7337` === location,
  );
  assert.ok(name, `the worker host serving ${location}`);
  const lostOnIt = outputs.filter(([, l]) => l === location).length;
  await net.host(name).cut();

  await line(new RegExp(`EXECUTOR ${victim} GONE`));
  const result = await line(/RESULT .*/);
  assert.equal(result[0], 'RESULT 101 keys, 20000 in all');
  const stats = JSON.parse((await line(/STATS (\{.*\})/))[1] as string);
  assert.equal(stats.stagesResubmitted, 1, driver.stderr);
  assert.match(
    driver.stderr,
    new RegExp(
      `Resubmitting ShuffleMapStage 0 \\(shuffle 0\\): ${lostOnIt} of 4 map outputs are missing`,
    ),
  );
  const end = await driver.closed;
  assert.equal(end.code, 0, driver.stderr);
});
