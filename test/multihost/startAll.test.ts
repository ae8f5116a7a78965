/**
 * `wick start-all` / `stop-all` as a Spark operator runs them: logged in to the master's machine,
 * a conf/workers listing the worker machines, each reached over ssh (an sshd per simulated host).
 * One host of the list cannot be reached: it is named, and the others still start. The master
 * makes the cluster secret on its first start; it reaches the workers, which never had it, on no
 * command line and in no log.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isAlive, repoRoot } from '../helpers/cli.js';
import { type Host, hostsUnavailable, startHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/processes.js';
import { makeSshKeys, sshOptions, startSshd } from '../helpers/sshd.js';

const skip = hostsUnavailable();

/** `text` as one word of a shell command line. */
const word = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

test('start-all starts a worker on each reachable host of conf/workers over ssh, names the unreachable one, and stop-all stops them all', {
  skip,
  timeout: 300_000,
}, async (t) => {
  const { hosts, subnet } = await startHosts(t, ['master', 'w1', 'w2']);
  const keys = makeSshKeys(t);
  const sshd: Record<string, number> = {};
  for (const h of Object.values(hosts)) {
    sshd[h.name] = (await startSshd(h, keys, { WICK_WORKER_HOST: h.address })).pid;
  }
  const master = hosts.master as Host;
  const unreachable = `${subnet}.99`;
  const confDir = join(keys.dir, 'conf');
  mkdirSync(confDir);
  writeFileSync(
    join(confDir, 'workers'),
    [
      '# the worker machines, one a line',
      hosts.w1?.address,
      `${hosts.w2?.address}   # the second`,
      '',
      `${unreachable}  # no such machine`,
    ].join('\n'),
  );
  // The operator's session on the master's machine: its settings, as a spark-env.sh holds them.
  // The logs, the work dirs and the secret in each machine's own /tmp.
  const session = [
    `cd ${word(repoRoot)} &&`,
    'XDG_CONFIG_HOME=/tmp/config',
    'WICK_LOG_DIR=/tmp/wick-logs',
    'WICK_WORKER_DIR=/tmp/wick-work',
    'WICK_WORKER_CORES=1',
    'WICK_WORKER_MEMORY=512m',
    `WICK_CONF_DIR=${word(confDir)}`,
    `WICK_SSH_OPTS=${word(sshOptions(keys).join(' '))}`,
    `WICK_MASTER_HOST=${master.address}`,
    'WICK_MASTER_WEBUI_PORT=0',
    'node bin/wick.js',
  ].join(' ');
  const onMaster = async (args: string) => {
    const p = master.spawn('ssh', [
      ...sshOptions(keys),
      `root@${master.address}`,
      `${session} ${args}`,
    ]);
    p.child.stdin?.end();
    const { code } = await p.closed;
    return { code, stdout: p.stdout, stderr: p.stderr };
  };

  const started = await onMaster('start-all');
  const out = `${started.stdout}\n${started.stderr}`;
  assert.equal(started.code, 1, `a host failed, so start-all fails:\n${out}`);
  assert.match(
    started.stdout,
    new RegExp(`started master \\(process \\d+\\) at wick://${master.address}:7077`),
  );
  for (const w of [hosts.w1, hosts.w2] as Host[]) {
    assert.match(
      started.stdout,
      new RegExp(
        `^${w.address.replace(/\./g, '\\.')}: started worker \\(process \\d+\\) as worker-`,
        'm',
      ),
      out,
    );
  }
  assert.match(
    started.stdout,
    new RegExp(`^${unreachable.replace(/\./g, '\\.')}: ssh: connect to host ${unreachable}`, 'm'),
    out,
  );
  assert.match(
    started.stderr,
    new RegExp(`start-worker failed on 1 of 3 hosts: ${unreachable} \\(exit 255\\)`),
  );

  // wick status, on the master's machine, shows both workers.
  const alive = await waitFor(
    'both workers ALIVE in wick status',
    async () => {
      const s = await onMaster(`status --master wick://${master.address}:7077`);
      const lines = s.stdout.split('\n').filter((l) => / ALIVE /.test(l));
      return lines.length === 2 ? lines : undefined;
    },
    60_000,
  );
  for (const w of [hosts.w1, hosts.w2] as Host[]) {
    assert.ok(
      alive.some((l) => l.includes(` ${w.address}:`)),
      `${w.name} in ${alive.join('\n')}`,
    );
  }

  // The secret the master made, read from its machine's /tmp.
  const fsOf = (h: Host) => `/proc/${sshd[h.name]}/root`;
  const secret = readFileSync(`${fsOf(master)}/tmp/config/wick/cluster-secret`, 'utf8').trim();
  assert.ok(secret.length >= 16);
  assert.ok(!out.includes(secret), 'start-all does not print it');
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    assert.ok(!cmdline.includes(secret), `process ${pid} has the secret on its command line`);
  }
  const workerPids: number[] = [];
  for (const h of Object.values(hosts)) {
    const logs = `${fsOf(h)}/tmp/wick-logs`;
    const files = readdirSync(logs);
    assert.equal(files.length, 1, `${h.name}: one log, ${files}`);
    for (const f of files) {
      assert.ok(
        !readFileSync(join(logs, f), 'utf8').includes(secret),
        `${h.name}: ${f} holds the secret`,
      );
    }
    const pidFiles = readdirSync(`${fsOf(h)}/tmp`).filter((f) => /^wick-.*\.pid$/.test(f));
    assert.equal(pidFiles.length, 1, `${h.name}: ${pidFiles}`);
    const pid = Number(readFileSync(`${fsOf(h)}/tmp/${pidFiles[0]}`, 'utf8'));
    assert.ok(isAlive(pid));
    workerPids.push(pid);
  }

  const stopped = await onMaster('stop-all');
  assert.equal(stopped.code, 1, `${stopped.stdout}\n${stopped.stderr}`);
  for (const w of [hosts.w1, hosts.w2] as Host[]) {
    assert.match(
      stopped.stdout,
      new RegExp(`^${w.address.replace(/\./g, '\\.')}: stopped worker \\(process \\d+\\)`, 'm'),
    );
  }
  assert.match(stopped.stdout, /^stopped master \(process \d+\)/m);
  assert.match(stopped.stderr, new RegExp(`stop-worker failed on 1 of 3 hosts: ${unreachable}`));
  for (const pid of workerPids) assert.equal(isAlive(pid), false, `process ${pid} stopped`);
  for (const h of Object.values(hosts)) {
    assert.deepEqual(
      readdirSync(`${fsOf(h)}/tmp`).filter((f) => /^wick-.*\.pid$/.test(f)),
      [],
      `${h.name}: pid file removed`,
    );
  }
});
