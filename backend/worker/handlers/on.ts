import type { AnyMessageDef } from '../../protocol/registry.js';
import type { HandlerOf } from '../../rpc/RpcEndpoint.js';

/** The Worker's `this.on`, handed to the files of handlers/ that register its handlers. */
export type On = <D extends AnyMessageDef>(def: D, handler: HandlerOf<D>) => void;

/** What a file of handlers/ is given to register its handlers with. */
export interface HandlerRegistry {
  on: On;
  /**
   * As `on`, for a message after which what the worker's page shows may have changed (a launch,
   * a kill, a new master): once its handler is done, the page is told (Worker.onStateChange).
   */
  onChanging: On;
  /** Tells the worker's page its state changed, from outside a handler (a runner's callback). */
  stateChanged: () => void;
}

/** `on`, with `changed` called after each handler settles (not if it throws). */
export function notifyingAfter(on: On, changed: () => void): On {
  return <D extends AnyMessageDef>(def: D, handler: HandlerOf<D>) => {
    const fn = handler as (message: unknown, ctx: unknown) => unknown;
    const wrapped = (message: unknown, ctx: unknown) => {
      const result = fn(message, ctx);
      if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function') {
        changed();
        return result;
      }
      return Promise.resolve(result).then((value) => {
        changed();
        return value;
      });
    };
    on(def, wrapped as HandlerOf<D>);
  };
}
