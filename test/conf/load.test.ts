/**
 * loadConf: where a daemon's settings come from and what it says about bad or unknown ones; the
 * properties-file format; and the master URLs a worker is given.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AppConf } from '../../backend/conf/app.js';
import { DaemonConf } from '../../backend/conf/daemon.js';
import {
  type ConfSources,
  loadConf,
  readPropertiesFile,
  resolveConf,
} from '../../backend/conf/load.js';
import { MasterConf } from '../../backend/conf/master.js';
import { RpcConf } from '../../backend/conf/rpc.js';
import { ShuffleConf } from '../../backend/conf/shuffle.js';
import { ConfigError, type WickConf } from '../../backend/conf/WickConf.js';
import { WorkerConf } from '../../backend/conf/worker.js';
import { parseMasterUrls } from '../../backend/rpc/masterUrls.js';
import { setLogSink } from '../../backend/util/log.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-load-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** An empty conf dir, so that no conf/wick-defaults.conf of the working directory is read. */
const emptyConfDir = join(dir, 'empty-conf');
mkdirSync(emptyConfDir);
const isolated = { WICK_CONF_DIR: emptyConfDir };

let fileCount = 0;
function propertiesFile(text: string): string {
  const path = join(dir, `p${fileCount++}.conf`);
  writeFileSync(path, text);
  return path;
}

/** Runs `fn` with the log captured; returns what was logged. */
function captureLog(fn: () => void): string[] {
  const lines: string[] = [];
  const prev = setLogSink((line) => lines.push(line));
  try {
    fn();
  } finally {
    setLogSink(prev);
  }
  return lines;
}

function load(sources: ConfSources) {
  return loadConf({ ...sources, env: { ...isolated, ...sources.env } });
}

// Precedence ------------------------------------------------------------------------------------

test('precedence: flags > --conf > properties file > environment > defaults', () => {
  const file = propertiesFile('wick.master.port 2000\nwick.master.host file-host\n');
  const env = { WICK_MASTER_PORT: '1000', WICK_MASTER_HOST: 'env-host' };
  const flag = (value: string | undefined) => [{ flag: '--port', key: 'wick.master.port', value }];

  assert.equal(load({}).get(DaemonConf.masterPort), 7077, 'the default');
  assert.equal(load({ env }).get(DaemonConf.masterPort), 1000, 'env over the default');
  assert.equal(
    load({ env, propertiesFile: file }).get(DaemonConf.masterPort),
    2000,
    'the file over env',
  );
  assert.equal(
    load({ env, propertiesFile: file, confPairs: ['wick.master.port=3000'] }).get(
      DaemonConf.masterPort,
    ),
    3000,
    '--conf over the file',
  );
  const all = load({
    env,
    propertiesFile: file,
    confPairs: ['wick.master.port=3000'],
    flags: flag('4000'),
  });
  assert.equal(all.get(DaemonConf.masterPort), 4000, 'the flag over --conf');
  // Each source sets only what it sets: the host still comes from the file.
  assert.equal(all.get(DaemonConf.masterHost), 'file-host');
  // A flag not given (undefined) does not hide the layers below it.
  assert.equal(
    load({ env, confPairs: ['wick.master.port=3000'], flags: flag(undefined) }).get(
      DaemonConf.masterPort,
    ),
    3000,
  );
});

test('a later --conf of the same key wins; a value may contain "="', () => {
  const c = load({
    confPairs: ['wick.worker.timeout=10s', 'wick.worker.timeout=20s', 'wick.local.dir=/a=b,/c'],
  });
  assert.equal(c.get(MasterConf.workerTimeout), 20_000);
  assert.equal(c.get(DaemonConf.localDirs), '/a=b,/c');
});

test('every WICK_* environment variable sets its key; an empty one is ignored', () => {
  const c = load({
    env: {
      WICK_MASTER_HOST: 'mh',
      WICK_MASTER_PORT: '7100',
      WICK_MASTER_WEBUI_PORT: '8100',
      WICK_WORKER_CORES: '3',
      WICK_WORKER_MEMORY: '2g',
      WICK_WORKER_PORT: '7200',
      WICK_WORKER_WEBUI_PORT: '8200',
      WICK_WORKER_DIR: '/w',
      WICK_LOCAL_DIRS: '/l1,/l2',
    },
  });
  assert.equal(c.get(DaemonConf.masterHost), 'mh');
  assert.equal(c.get(DaemonConf.masterPort), 7100);
  assert.equal(c.get(DaemonConf.masterUiPort), 8100);
  assert.equal(c.get(DaemonConf.workerCores), 3);
  assert.equal(c.get(DaemonConf.workerMemory), 2048);
  assert.equal(c.get(DaemonConf.workerPort), 7200);
  assert.equal(c.get(DaemonConf.workerUiPort), 8200);
  assert.equal(c.get(DaemonConf.workerDir), '/w');
  assert.equal(c.get(DaemonConf.localDirs), '/l1,/l2');
  assert.equal(load({ env: { WICK_MASTER_PORT: '' } }).get(DaemonConf.masterPort), 7077);
});

test('without --properties-file, $WICK_CONF_DIR/wick-defaults.conf is read if it exists', () => {
  const confDir = join(dir, 'conf-dir');
  mkdirSync(confDir);
  writeFileSync(join(confDir, 'wick-defaults.conf'), 'wick.deploy.spreadOut false\n');
  const c = loadConf({ env: { WICK_CONF_DIR: confDir } });
  assert.equal(c.get(MasterConf.spreadOut), false);
  // An explicit file replaces the default one.
  const other = propertiesFile('wick.deploy.defaultCores 4\n');
  const d = loadConf({ env: { WICK_CONF_DIR: confDir }, propertiesFile: other });
  assert.equal(d.get(MasterConf.spreadOut), true);
  assert.equal(d.get(MasterConf.defaultCores), 4);
});

// Unknown keys and bad values -------------------------------------------------------------------

test('unknown keys are warned about with where they came from, and do not stop start-up', () => {
  const file = propertiesFile('wick.bogus.fromFile 1\nwick.worker.timeout 5s\n');
  let c: ReturnType<typeof loadConf> | undefined;
  const lines = captureLog(() => {
    c = load({
      propertiesFile: file,
      confPairs: ['wick.bogus.fromConf=2', 'wick.port.maxRetries=3'],
    });
  });
  const warnings = lines.filter((l) => / WARN /.test(l));
  assert.equal(warnings.length, 2, lines.join('\n'));
  assert.ok(
    warnings.some(
      (l) => l.includes('wick.bogus.fromFile') && l.includes(`properties file ${file}`),
    ),
    warnings.join('\n'),
  );
  assert.ok(
    warnings.some((l) => l.includes('wick.bogus.fromConf') && l.includes('--conf')),
    warnings.join('\n'),
  );
  assert.equal(c?.get(MasterConf.workerTimeout), 5_000);
  assert.equal(c?.get(RpcConf.portMaxRetries), 3);
});

test('known keys of every daemon are not warned about', () => {
  const lines = captureLog(() =>
    load({
      confPairs: [
        'wick.master.port=0',
        'wick.worker.cores=2',
        'wick.worker.killTimeout=1s',
        'wick.deploy.recoveryMode=FILESYSTEM',
        'wick.rpc.askTimeout=5s',
      ],
    }),
  );
  assert.deepEqual(lines, []);
  assert.ok(WorkerConf.killTimeout);
});

/** Asserts loadConf refuses with a ConfigError naming the key, the value, what was expected and where it was set. */
function assertRefused(
  sources: ConfSources,
  key: string,
  value: string,
  expected: RegExp,
  from: string,
): void {
  assert.throws(
    () => captureLog(() => load(sources)),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `a ConfigError, got ${err}`);
      assert.equal(err.key, key);
      assert.equal(err.value, value);
      assert.ok(err.message.includes(key), `names ${key}: ${err.message}`);
      assert.ok(err.message.includes(`"${value}"`), `quotes "${value}": ${err.message}`);
      assert.match(err.message, expected);
      assert.ok(err.message.includes(from), `says it came from ${from}: ${err.message}`);
      assert.ok(err.cause instanceof Error, 'keeps the parser error as cause');
      return true;
    },
  );
}

test('a bad value of a known key names the key, the value, what was expected, and its source', () => {
  assertRefused(
    { flags: [{ flag: '--port', key: 'wick.master.port', value: 'abc' }] },
    'wick.master.port',
    'abc',
    /whole number from 0 to 65535/,
    'set by --port',
  );
  assertRefused(
    { flags: [{ flag: '--memory', key: 'wick.worker.memory', value: '12x' }] },
    'wick.worker.memory',
    '12x',
    /size such as .*2g/,
    'set by --memory',
  );
  assertRefused(
    { confPairs: ['wick.worker.cores=0'] },
    'wick.worker.cores',
    '0',
    /whole number from 1 to/,
    'set by --conf',
  );
  const file = propertiesFile('wick.worker.timeout soon\n');
  assertRefused(
    { propertiesFile: file },
    'wick.worker.timeout',
    'soon',
    /duration such as/,
    `set by properties file ${file}`,
  );
  assertRefused(
    { env: { WICK_WORKER_MEMORY: '0m' } },
    'wick.worker.memory',
    '0m',
    /at least 1m/,
    'set by environment variable WICK_WORKER_MEMORY',
  );
  assertRefused(
    { confPairs: ['wick.deploy.spreadOut=yes'] },
    'wick.deploy.spreadOut',
    'yes',
    /true or false/,
    'set by --conf',
  );
  assertRefused(
    { confPairs: ['wick.port.maxRetries=-1'] },
    'wick.port.maxRetries',
    '-1',
    /from 0 to 1000/,
    'set by --conf',
  );
});

test('a bad value overridden by a good one from a higher source is not an error', () => {
  const c = load({
    env: { WICK_MASTER_PORT: 'abc' },
    flags: [{ flag: '--port', key: 'wick.master.port', value: '7100' }],
  });
  assert.equal(c.get(DaemonConf.masterPort), 7100);
});

test('a --conf without "=" says what is expected', () => {
  for (const pair of ['wick.worker.timeout', '=5s']) {
    assert.throws(
      () => load({ confPairs: [pair] }),
      (err: Error) => {
        assert.ok(err.message.includes(`"${pair}"`), err.message);
        assert.match(err.message, /expected key=value/);
        return true;
      },
    );
  }
});

// The properties file ---------------------------------------------------------------------------

test('properties files take "key value", "key=value" and "key: value", with # and ! comments', () => {
  const file = propertiesFile(
    [
      '# a comment',
      '! another comment',
      '',
      '   ',
      'a.spaced    value one',
      'b.equals=two',
      'c.equalsSpaced = three',
      'd.colon: four',
      'e.colonTight:five',
      '  f.indented\tsix  ',
      'g.withEquals=x=y',
      'h.empty=',
      'i.crlf seven\r',
      '#not.a.key eight',
    ].join('\n'),
  );
  assert.deepEqual(readPropertiesFile(file), [
    ['a.spaced', 'value one'],
    ['b.equals', 'two'],
    ['c.equalsSpaced', 'three'],
    ['d.colon', 'four'],
    ['e.colonTight', 'five'],
    ['f.indented', 'six'],
    ['g.withEquals', 'x=y'],
    ['h.empty', ''],
    ['i.crlf', 'seven'],
  ]);
});

test('a properties file that cannot be read or parsed is named, with the line', () => {
  const missing = join(dir, 'nope.conf');
  assert.throws(
    () => load({ propertiesFile: missing }),
    (err: Error) => {
      assert.ok(err.message.includes(missing), err.message);
      assert.match(err.message, /Cannot read properties file/);
      return true;
    },
  );
  const bad = propertiesFile('wick.worker.timeout 5s\n=oops\n');
  assert.throws(
    () => load({ propertiesFile: bad }),
    (err: Error) => {
      assert.ok(err.message.includes(`${bad}:2`), err.message);
      assert.ok(err.message.includes('"=oops"'), err.message);
      assert.match(err.message, /expected "key value" or "key=value"/);
      return true;
    },
  );
});

// Master URLs ----------------------------------------------------------------------------------------

test('parseMasterUrls takes one or several masters, with or without wick:// or spark://', () => {
  const cases: [string, string[]][] = [
    ['wick://127.0.0.1:7077', ['127.0.0.1:7077']],
    ['wick://m1:7077,m2:7078', ['m1:7077', 'm2:7078']],
    ['wick://m1:7077,wick://m2:7078', ['m1:7077', 'm2:7078']],
    ['m1:7077', ['m1:7077']],
    [' wick://m1:7077/ , m2:1 ', ['m1:7077', 'm2:1']],
    ['wick://[::1]:7077', ['[::1]:7077']],
    ['wick://host.example.com:65535', ['host.example.com:65535']],
    // Spark's scheme, as a Spark user writes it.
    ['spark://m1:7077', ['m1:7077']],
    ['spark://m1:7077,m2:7078', ['m1:7077', 'm2:7078']],
    ['spark://m1:7077,spark://m2:7078', ['m1:7077', 'm2:7078']],
  ];
  for (const [spec, expected] of cases) assert.deepEqual(parseMasterUrls(spec), expected, spec);
});

test('parseMasterUrls refuses a bad URL, quoting it and saying what is expected', () => {
  for (const spec of [
    '',
    'wick://',
    'wick://m1',
    'wick://m1:abc',
    'wick://m1:0',
    'wick://m1:70000',
    'wick://m1:7077,',
    'wick://m1:7077,,m2:7078',
    'spark://m1',
    'http://m1:7077',
    'yarn',
    'local[*]',
    'wick://m1:7077/extra',
  ]) {
    assert.throws(
      () => parseMasterUrls(spec),
      (err: Error) => {
        assert.ok(err.message.includes(`"${spec}"`), `quotes "${spec}": ${err.message}`);
        assert.match(
          err.message,
          /expected wick:\/\/host:port\[,host:port…\] or spark:\/\/host:port/,
        );
        return true;
      },
      spec,
    );
  }
});

// Spark's names ---------------------------------------------------------------------------------

test("spark.* keys that Wick has as wick.* are taken, in Spark's units; unknown ones are warned about once", () => {
  const file = propertiesFile(
    'spark.executor.memory 2g\nspark.cores.max 1\nspark.serializer org.apache.spark.serializer.KryoSerializer\n',
  );
  let c: ReturnType<typeof resolveConf> | undefined;
  const lines = captureLog(() => {
    c = resolveConf({
      env: isolated,
      propertiesFile: file,
      confPairs: [
        'spark.rpc.askTimeout=30',
        'spark.rpc.message.maxSize=64',
        'spark.network.maxRemoteBlockSizeFetchToMem=8m',
        'spark.serializer=again',
        'wick.bogus.key=1',
      ],
    });
  });
  const conf = c?.conf as WickConf;
  assert.equal(conf.get(AppConf.executorMemory), 2048);
  assert.equal(conf.get(AppConf.coresMax), 1);
  assert.equal(conf.get(RpcConf.askTimeout), 30_000, 'a bare spark.rpc.askTimeout is seconds');
  assert.equal(
    conf.get(RpcConf.maxMessageSize),
    64 * 1024 * 1024,
    'spark.rpc.message.maxSize is MiB',
  );
  assert.equal(conf.get(ShuffleConf.maxSizeFetchToMem), 8 * 1024 * 1024, 'a renamed key');
  assert.equal(conf.getRaw('spark.executor.memory'), '2g', 'read back under either name');
  assert.equal(conf.contains('spark.executor.memory'), true);
  assert.equal(
    c?.origins.get('wick.executor.memory'),
    `properties file ${file} (as spark.executor.memory)`,
  );
  const warnings = lines.filter((l) => / WARN /.test(l));
  assert.equal(warnings.length, 2, lines.join('\n'));
  assert.match(
    warnings.join('\n'),
    /Ignoring unknown configuration key spark\.serializer \(from --conf\)/,
  );
  assert.match(
    warnings.join('\n'),
    /Ignoring unknown configuration key wick\.bogus\.key \(from --conf\)/,
  );
});

test("spark.x and wick.x in one source: Wick's name wins, and a warning says so; a higher source wins whatever its name", () => {
  let c: WickConf | undefined;
  const lines = captureLog(() => {
    c = load({ confPairs: ['wick.executor.memory=3g', 'spark.executor.memory=2g'] });
  });
  assert.equal(c?.get(AppConf.executorMemory), 3072);
  assert.match(
    lines.join('\n'),
    /WARN WickConf: spark\.executor\.memory=2g and wick\.executor\.memory=3g are both set by --conf: using wick\.executor\.memory/,
  );
  const file = propertiesFile('wick.executor.memory 3g\n');
  const d = load({ propertiesFile: file, confPairs: ['spark.executor.memory=2g'] });
  assert.equal(d.get(AppConf.executorMemory), 2048, '--conf over the file, under either name');
  // The same value under both names: nothing to warn about.
  assert.deepEqual(
    captureLog(() => load({ confPairs: ['spark.cores.max=2', 'wick.cores.max=2'] })),
    [],
  );
});

test('without --properties-file, spark-defaults.conf and wick-defaults.conf are both read; wick-defaults.conf wins', () => {
  const confDir = join(dir, 'both-conf');
  mkdirSync(confDir);
  writeFileSync(
    join(confDir, 'spark-defaults.conf'),
    'spark.executor.memory 2g\nspark.deploy.spreadOut false\n',
  );
  writeFileSync(join(confDir, 'wick-defaults.conf'), 'wick.executor.memory 3g\n');
  const { conf, origins } = resolveConf({ env: { WICK_CONF_DIR: confDir } });
  assert.equal(conf.get(AppConf.executorMemory), 3072);
  assert.equal(conf.get(MasterConf.spreadOut), false);
  assert.equal(
    origins.get('wick.deploy.spreadOut'),
    `properties file ${join(confDir, 'spark-defaults.conf')} (as spark.deploy.spreadOut)`,
  );
  // An explicit file replaces both.
  const other = propertiesFile('wick.deploy.defaultCores 4\n');
  const d = loadConf({ env: { WICK_CONF_DIR: confDir }, propertiesFile: other });
  assert.equal(d.get(AppConf.executorMemory), 1024);
});

test("spark-env.sh's SPARK_* variables set Wick's keys, WICK_* ones win; others are warned about by name", () => {
  let c: ReturnType<typeof resolveConf> | undefined;
  const lines = captureLog(() => {
    c = resolveConf({
      env: {
        ...isolated,
        SPARK_WORKER_CORES: '1',
        SPARK_WORKER_MEMORY: '512m',
        SPARK_WORKER_DIR: '/spark-work',
        SPARK_MASTER_HOST: 'spark-host',
        SPARK_MASTER_PORT: '7100',
        SPARK_MASTER_WEBUI_PORT: '8100',
        SPARK_WORKER_PORT: '7200',
        SPARK_WORKER_WEBUI_PORT: '8200',
        SPARK_LOCAL_DIRS: '/l',
        WICK_MASTER_HOST: 'wick-host',
        SPARK_WORKER_INSTANCES: '3',
        SPARK_DAEMON_MEMORY: '1g',
        SPARK_HOME: '/opt/spark',
      },
    });
  });
  const conf = c?.conf as WickConf;
  assert.equal(conf.get(DaemonConf.workerCores), 1);
  assert.equal(conf.get(DaemonConf.workerMemory), 512);
  assert.equal(conf.get(DaemonConf.workerDir), '/spark-work');
  assert.equal(
    conf.get(DaemonConf.masterHost),
    'wick-host',
    'WICK_MASTER_HOST over SPARK_MASTER_HOST',
  );
  assert.equal(conf.get(DaemonConf.masterPort), 7100);
  assert.equal(conf.get(DaemonConf.masterUiPort), 8100);
  assert.equal(conf.get(DaemonConf.workerPort), 7200);
  assert.equal(conf.get(DaemonConf.workerUiPort), 8200);
  assert.equal(conf.get(DaemonConf.localDirs), '/l');
  assert.equal(c?.origins.get('wick.worker.cores'), 'environment variable SPARK_WORKER_CORES');
  const warnings = lines.filter((l) => / WARN /.test(l));
  assert.equal(warnings.length, 2, lines.join('\n'));
  assert.match(
    warnings[0] ?? '',
    /Ignoring environment variable SPARK_DAEMON_MEMORY: Wick has no such setting/,
  );
  assert.match(
    warnings[1] ?? '',
    /Ignoring environment variable SPARK_WORKER_INSTANCES: Wick has no such setting \(this starts one worker/,
  );
});
