import { wickProtocol } from '../../backend/protocol/index.js';
import { isMessageDef, type Role } from '../../backend/protocol/registry.js';

/** Replies go back to the asker, not through the receiver's inbox: no endpoint handles them. */
const replies = new Set(wickProtocol.all().flatMap((d) => (d.replies ?? []).map((r) => r.type)));

/** The types of the protocol's messages that an endpoint of `role` must handle, sorted. */
export function messagesTo(role: Role): string[] {
  return wickProtocol
    .all()
    .filter((d) => d.to.includes(role) && !replies.has(d.type))
    .map((d) => d.type)
    .sort();
}

/** The self-messages defined in an endpoint's messages module, by type. */
export function selfMessagesOf(module: object): string[] {
  return Object.values(module)
    .filter(isMessageDef)
    .map((d) => d.type);
}
