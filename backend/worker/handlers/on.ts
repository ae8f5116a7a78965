import type { AnyMessageDef } from '../../protocol/registry.js';
import type { HandlerOf } from '../../rpc/RpcEndpoint.js';

/** The Worker's `this.on`, handed to the files of handlers/ that register its handlers. */
export type On = <D extends AnyMessageDef>(def: D, handler: HandlerOf<D>) => void;

/**
 * What a file of handlers/ is given to register its handlers with. No handler tells the
 * worker's page of a change: the components it calls do (StateChanges.ts).
 */
export interface HandlerRegistry {
  on: On;
}
