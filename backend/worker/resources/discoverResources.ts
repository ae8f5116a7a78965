import { execFile } from 'node:child_process';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type WorkerResourceRequest, workerResourceRequests } from '../../conf/resources.js';
import type { WickConf } from '../../conf/WickConf.js';
import {
  MAX_RESOURCE_ADDRESSES,
  MAX_RESOURCE_KINDS,
  ResourceAddress,
  type ResourceAddresses,
} from '../../protocol/resources.js';

/**
 * A worker's custom resources found at start (Spark's ResourceUtils.discoverResource): each
 * wick.worker.resource.<name>.discoveryScript is run and prints one ResourceInformation as JSON,
 * `{"name":"gpu","addresses":["0","1"]}`. The worker offers every address printed, at least
 * `.amount` of them (Spark does the same). A script that fails, hangs, prints too much, or prints
 * anything else stops the worker at start with what it printed and what was expected: a worker
 * that quietly offers no GPU would leave applications waiting with no clue.
 */

/** A script gets this long (a GPU query can take seconds on a loaded machine). */
export const DISCOVERY_TIMEOUT_MS = 60_000;
/** What a script may print: 1,024 addresses of 128 characters with room to spare. */
const MAX_OUTPUT_BYTES = 256 * 1024;

const Printed = Type.Object({
  name: Type.String(),
  addresses: Type.Array(ResourceAddress, { maxItems: MAX_RESOURCE_ADDRESSES, uniqueItems: true }),
});
const checkPrinted = TypeCompiler.Compile(Printed);

const EXPECTED = `one JSON object such as {"name":"gpu","addresses":["0","1"]}: the resource's name and its addresses, each a string of 1 to 128 characters, none twice, at most ${MAX_RESOURCE_ADDRESSES}`;

/** Runs a script; resolves with what it printed on stdout. Injected in tests of the parsing. */
export type ScriptRunner = (script: string) => Promise<string>;

export const runScript: ScriptRunner = (script) =>
  new Promise((resolve, reject) => {
    execFile(
      script,
      [],
      { timeout: DISCOVERY_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        if (!err) {
          resolve(stdout);
          return;
        }
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
        const why =
          e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER'
            ? `it printed more than ${MAX_OUTPUT_BYTES} bytes`
            : e.killed
              ? `it did not finish within ${DISCOVERY_TIMEOUT_MS / 1000} s`
              : typeof e.code === 'string'
                ? `it could not be run (${e.code}: ${e.message})`
                : `it exited with status ${String(e.code)}`;
        const said = String(stderr).trim().slice(-2000);
        reject(new Error(`${why}${said ? `; its stderr: ${said}` : ''}`));
      },
    );
  });

/** Parses one script's output for `request`, or throws naming the script and what was expected. */
export function parseDiscoveryOutput(
  request: WorkerResourceRequest,
  script: string,
  stdout: string,
): string[] {
  const where = `The discovery script ${script} for resource ${request.name} (wick.worker.resource.${request.name}.discoveryScript)`;
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new Error(`${where} printed ${quote(stdout)}, which is not JSON; expected ${EXPECTED}`);
  }
  if (!checkPrinted.Check(value)) {
    const first = checkPrinted.Errors(value).First();
    const at = first ? ` (${first.path || '/'}: ${first.message})` : '';
    throw new Error(`${where} printed ${quote(stdout)}${at}; expected ${EXPECTED}`);
  }
  if (value.name !== request.name) {
    throw new Error(
      `${where} printed resource name '${value.name}' but '${request.name}' was expected`,
    );
  }
  if (value.addresses.length < request.amount) {
    throw new Error(
      `${where} found ${value.addresses.length} address${value.addresses.length === 1 ? '' : 'es'} (${value.addresses.join(', ') || 'none'}) but wick.worker.resource.${request.name}.amount asks for ${request.amount}`,
    );
  }
  return value.addresses;
}

function quote(text: string): string {
  const t = text.trim();
  return t === '' ? 'nothing' : `'${t.length > 300 ? `${t.slice(0, 300)}…` : t}'`;
}

/** Every configured resource of this worker, discovered; {} when none is configured. */
export async function discoverWorkerResources(
  conf: WickConf,
  run: ScriptRunner = runScript,
): Promise<ResourceAddresses> {
  const out: ResourceAddresses = {};
  const requests = workerResourceRequests(conf);
  if (requests.length > MAX_RESOURCE_KINDS) {
    throw new Error(
      `The worker is configured with ${requests.length} resources (${requests.map((r) => r.name).join(', ')}); at most ${MAX_RESOURCE_KINDS} are taken`,
    );
  }
  for (const request of requests) {
    const script = request.discoveryScript;
    if (script === undefined) {
      throw new Error(
        `The worker is configured to offer resource ${request.name} (wick.worker.resource.${request.name}.amount=${request.amount}) but has no way to find it: set wick.worker.resource.${request.name}.discoveryScript to a program that prints {"name":"${request.name}","addresses":[...]}`,
      );
    }
    let stdout: string;
    try {
      stdout = await run(script);
    } catch (err) {
      throw new Error(
        `The discovery script ${script} for resource ${request.name} (wick.worker.resource.${request.name}.discoveryScript) failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
    out[request.name] = parseDiscoveryOutput(request, script, stdout);
  }
  return out;
}
