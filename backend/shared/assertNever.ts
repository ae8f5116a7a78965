/** The end of a `switch` that handles every case: a case added later fails to compile here. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
