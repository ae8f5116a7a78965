import { TypeCompiler } from '@sinclair/typebox/compiler';
import { EXECUTOR_RESOURCES_ENV } from '../../protocol/childEnv.js';
import { ResourceAddresses } from '../../protocol/resources.js';

const check = TypeCompiler.Compile(ResourceAddresses);

/**
 * The custom resources' addresses the worker gave this executor (WICK_EXECUTOR_RESOURCES), which
 * it tells its driver; none given: undefined. Anything else than addresses by name is an error
 * naming the variable and its value: an executor must not guess which GPU is its own.
 */
export function executorResourcesFromEnv(env: NodeJS.ProcessEnv): ResourceAddresses | undefined {
  const raw = env[EXECUTOR_RESOURCES_ENV];
  if (raw === undefined || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (!check.Check(value)) {
    throw new Error(
      `${EXECUTOR_RESOURCES_ENV} is '${raw.slice(0, 300)}': expected addresses by resource name, such as {"gpu":["0","1"]}`,
    );
  }
  return value;
}
