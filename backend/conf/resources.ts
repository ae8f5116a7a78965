import { ConfigError, defineFamily, type WickConf } from './WickConf.js';

/**
 * Custom resources (Spark's spark.{worker,executor,task}.resource.<name>.*): each component's
 * requests by resource name. Names are letters, digits, `_` and `-` (RESOURCE_NAME_PATTERN of
 * protocol/resources.ts, which conf/ may not import): a name carries into JSON and messages, and a
 * dot would make `a.b.amount` ambiguous (Spark cuts the name at the first dot).
 */

const NAME = '[A-Za-z0-9_-]{1,64}';
/** MAX_RESOURCE_ADDRESSES of protocol/resources.ts. */
const MAX_AMOUNT = 1024;

const family = (component: string, field: string, doc: string) =>
  defineFamily(
    `wick.${component}.resource.<name>.${field}`,
    new RegExp(`^wick\\.${component}\\.resource\\.${NAME}\\.${field}$`),
    doc,
  );

export const ResourceConf = {
  workerAmount: family(
    'worker',
    'amount',
    'How many addresses of resource `<name>` (gpu, fpga) the worker offers; it needs a discoveryScript that finds at least as many.',
  ),
  workerDiscoveryScript: family(
    'worker',
    'discoveryScript',
    'A program the worker runs at start to find resource `<name>`: it prints Spark\'s `{"name":"gpu","addresses":["0","1"]}` on stdout. The worker offers every address it prints (Spark does the same).',
  ),
  executorAmount: family(
    'executor',
    'amount',
    'How many addresses of resource `<name>` each executor gets; an application waits until a worker has them free.',
  ),
  taskAmount: family(
    'task',
    'amount',
    "How much of resource `<name>` each task takes of its executor's: a whole number of addresses, or a fraction 1/n to share each address between n tasks. Needs `wick.executor.resource.<name>.amount`.",
  ),
};

/** The names of the resources `component` has any setting for, sorted. */
function namesOf(conf: WickConf, component: string): string[] {
  const re = new RegExp(`^wick\\.${component}\\.resource\\.(${NAME})\\.[A-Za-z]+$`);
  const names = new Set<string>();
  for (const [key] of conf.entries()) {
    const m = re.exec(key);
    if (m) names.add(m[1] as string);
  }
  return [...names].sort();
}

function wholeAmount(key: string, raw: string | undefined, name: string): number {
  if (raw === undefined) {
    throw new ConfigError(key, '', `resource ${name} is configured without an amount: set ${key}`);
  }
  const n = Number(raw.trim());
  if (!/^\s*\d+\s*$/.test(raw) || n < 1 || n > MAX_AMOUNT) {
    throw new ConfigError(
      key,
      raw,
      `'${raw}' is not an amount of addresses: expected a whole number from 1 to ${MAX_AMOUNT}`,
    );
  }
  return n;
}

export interface WorkerResourceRequest {
  name: string;
  amount: number;
  discoveryScript: string | undefined;
}

/** The worker's resources to discover (Spark's parseAllResourceRequests("spark.worker")). */
export function workerResourceRequests(conf: WickConf): WorkerResourceRequest[] {
  return namesOf(conf, 'worker').map((name) => {
    const key = `wick.worker.resource.${name}.amount`;
    const script = conf.getRaw(`wick.worker.resource.${name}.discoveryScript`);
    return {
      name,
      amount: wholeAmount(key, conf.getRaw(key), name),
      discoveryScript: script === undefined || script.trim() === '' ? undefined : script,
    };
  });
}

/** Each executor's resources (Spark's ResourceRequirement: name and amount). */
export function executorResourceRequests(
  conf: WickConf,
): { resourceName: string; amount: number }[] {
  return namesOf(conf, 'executor').map((name) => {
    const key = `wick.executor.resource.${name}.amount`;
    return { resourceName: name, amount: wholeAmount(key, conf.getRaw(key), name) };
  });
}

/**
 * Each task's resources, as Spark reads spark.task.resource.<name>.amount: a whole amount, or a
 * fraction ≤ 0.5 that shares an address between floor(1 / amount) tasks (`parts`).
 */
export interface TaskResourceRequest {
  resourceName: string;
  /** Addresses one task takes (1 when it shares one). */
  amount: number;
  /** Tasks that share one address. */
  parts: number;
}

export function taskResourceRequests(conf: WickConf): TaskResourceRequest[] {
  const executor = new Map(executorResourceRequests(conf).map((r) => [r.resourceName, r.amount]));
  return namesOf(conf, 'task').map((name) => {
    const key = `wick.task.resource.${name}.amount`;
    const raw = conf.getRaw(key) ?? '';
    const n = Number(raw.trim());
    const whole = Number.isInteger(n) && n >= 1 && n <= MAX_AMOUNT;
    const fraction = n > 0 && n <= 0.5;
    if (raw.trim() === '' || !(whole || fraction)) {
      throw new ConfigError(
        key,
        raw,
        `'${raw}' is not a task's amount: expected a whole number from 1 to ${MAX_AMOUNT}, or a fraction up to 0.5 (0.25: four tasks share an address)`,
      );
    }
    const perExecutor = executor.get(name);
    if (perExecutor === undefined) {
      throw new ConfigError(
        key,
        raw,
        `tasks ask for resource ${name} but executors get none: set wick.executor.resource.${name}.amount too`,
      );
    }
    const amount = whole ? n : 1;
    if (amount > perExecutor) {
      throw new ConfigError(
        key,
        raw,
        `each task asks for ${amount} ${name} but each executor gets ${perExecutor} (wick.executor.resource.${name}.amount): no task could run`,
      );
    }
    return { resourceName: name, amount, parts: whole ? 1 : Math.floor(1 / n) };
  });
}
