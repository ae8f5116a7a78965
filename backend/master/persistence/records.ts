import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Logger } from '../../util/log.js';
import {
  PersistedApp,
  PersistedDriver,
  type PersistedState,
  PersistedToken,
  PersistedWorker,
} from './PersistenceEngine.js';

const checks = {
  app: TypeCompiler.Compile(PersistedApp),
  driver: TypeCompiler.Compile(PersistedDriver),
  worker: TypeCompiler.Compile(PersistedWorker),
  token: TypeCompiler.Compile(PersistedToken),
};

function kindOf(name: string): keyof typeof checks | undefined {
  if (name.startsWith('app_')) return 'app';
  if (name.startsWith('driver_')) return 'driver';
  if (name.startsWith('worker_')) return 'worker';
  if (name.startsWith('token_')) return 'token';
  return undefined;
}

/**
 * Reads a store of records named as Spark names them (`app_<id>`, `driver_<id>`, `worker_<id>`,
 * each one JSON) into the persisted state, whatever the store (files, znodes). A record that does
 * not load, parse or match its schema is reported by name (`what` + `where(name)`) and skipped.
 */
export async function readRecords(
  names: readonly string[],
  load: (name: string) => Promise<string | undefined>,
  where: (name: string) => string,
  what: string,
  log: Logger,
): Promise<PersistedState> {
  const state: PersistedState = { apps: [], drivers: [], workers: [], tokens: [] };
  for (const name of [...names].sort()) {
    const kind = kindOf(name);
    if (!kind) continue;
    const skip = (why: string) => log.warn(`Skipping corrupt ${what} ${where(name)}: ${why}`);
    let value: unknown;
    try {
      const text = await load(name);
      if (text === undefined) continue;
      value = JSON.parse(text);
    } catch (err) {
      skip((err as Error).message);
      continue;
    }
    const check = checks[kind];
    if (!check.Check(value)) {
      const first = check.Errors(value).First();
      skip(first ? `${first.path || '/'} ${first.message}` : 'unexpected content');
      continue;
    }
    if (kind === 'app') state.apps.push(value as PersistedApp);
    else if (kind === 'driver') state.drivers.push(value as PersistedDriver);
    else if (kind === 'token') state.tokens?.push(value as PersistedToken);
    else state.workers.push(value as PersistedWorker);
  }
  return state;
}
