/**
 * Spark's encryption settings as Wick reads them (conf/sparkNames.ts): the switches and Spark 4's
 * PEM files map onto wick.ssl.*; key stores, protocol choices and Spark's AES scheme are refused
 * by name, never dropped in silence.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import '../../backend/conf/all.js';
import { SslConf } from '../../backend/conf/ssl.js';
import { ConfigError, WickConf } from '../../backend/conf/WickConf.js';

test('Spark switches and PEM files read as wick.ssl.*', () => {
  for (const key of [
    'spark.ssl.enabled',
    'spark.network.crypto.enabled',
    'spark.ssl.rpc.enabled',
    'spark.ssl.ui.enabled',
    'spark.ssl.standalone.enabled',
  ]) {
    const conf = new WickConf({ [key]: 'false' });
    conf.validate();
    assert.equal(conf.get(SslConf.enabled), false, key);
  }
  const files = new WickConf({
    'spark.ssl.rpc.certChain': '/etc/wick/tls.crt',
    'spark.ssl.privateKey': '/etc/wick/tls.key',
  });
  assert.equal(files.get(SslConf.certFile), '/etc/wick/tls.crt');
  assert.equal(files.get(SslConf.keyFile), '/etc/wick/tls.key');
});

test('key stores, protocols and Spark’s AES settings are refused with what to do', () => {
  const cases: [string, RegExp][] = [
    ['spark.ssl.keyStore', /wick\.ssl\.certFile and wick\.ssl\.keyFile/],
    ['spark.ssl.ui.trustStorePassword', /PEM files, not Java key stores/],
    ['spark.ssl.protocol', /TLS 1\.3 only/],
    ['spark.network.crypto.keyLength', /not Spark's AES or SASL scheme/],
  ];
  for (const [key, why] of cases) {
    const conf = new WickConf({ [key]: 'x' });
    assert.throws(
      () => conf.validate(),
      (err: Error) =>
        err instanceof ConfigError && err.message.includes(key) && why.test(err.message),
      key,
    );
  }
});
