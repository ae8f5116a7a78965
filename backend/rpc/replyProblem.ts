import {
  type MessageCatalog,
  previewJSON,
  validateMessage,
  type WireMessage,
} from '../protocol/registry.js';

/** What is wrong with a reply from a peer (a message of the catalogue, valid), or undefined. */
export function replyProblem(protocol: MessageCatalog, result: unknown): string | undefined {
  if (
    typeof result !== 'object' ||
    result === null ||
    typeof (result as WireMessage).type !== 'string'
  ) {
    return `expected a message object with a "type", got ${previewJSON(result)}`;
  }
  const def = protocol.get((result as WireMessage).type);
  if (!def) return `unknown message type ${(result as WireMessage).type}`;
  return validateMessage(def, result);
}
