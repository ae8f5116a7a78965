/**
 * An application's states (Spark's ApplicationState), alone in a file of no dependencies: the
 * extension's filter lists them without bundling the protocol's schemas.
 */
export const ApplicationStates = [
  'WAITING',
  'RUNNING',
  'FINISHED',
  'FAILED',
  'KILLED',
  'UNKNOWN',
] as const;
export type ApplicationState = (typeof ApplicationStates)[number];
