import { Type } from '@sinclair/typebox';
import { boundary, defineMessage } from './registry.js';

/**
 * Users' submit tokens (master/tokens/): the operator makes, lists and revokes them through the
 * master with the cluster secret; a token's holder asks for a submission's key to start a
 * client-mode driver with (it never hands the driver the token itself).
 */

const c2m = boundary('Client ↔ Master (tokens)', 'client', 'master');

/** The most tokens a master keeps. */
export const MAX_TOKENS = 10_000;
/** A token lives at most ten years. */
export const MAX_TOKEN_TTL_MS = 10 * 365 * 24 * 3600 * 1000;

export const TokenName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$',
  maxLength: 64,
  description: "Who holds it: a user's name (letters, digits, . _ @ -; at most 64)",
});
export const TokenId = Type.String({
  pattern: '^tok-[0-9a-f]{16}$',
  maxLength: 20,
  description: 'tok- and 16 hex digits',
});
const Time = Type.Integer({ minimum: 0, maximum: 2 ** 53 - 1, description: 'ms since the epoch' });

const TokenEntry = Type.Object(
  {
    id: TokenId,
    name: TokenName,
    createdAt: Time,
    expiresAt: Type.Optional(Time),
    allApps: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const CreateToken = defineMessage(
  c2m,
  'CreateToken',
  "Make a user's submit token (the cluster secret only).",
  {
    name: TokenName,
    ttlMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: MAX_TOKEN_TTL_MS })),
    allApps: Type.Boolean(),
  },
  { reply: () => TokenCreated },
);

export const TokenCreated = defineMessage(
  c2m,
  'TokenCreated',
  'The answer to CreateToken: the token, shown this once (the master keeps only its hash).',
  {
    entry: TokenEntry,
    token: Type.String({ pattern: '^token:tok-[0-9a-f]{16}:[0-9a-f]{64}$', maxLength: 100 }),
  },
);

export const ListTokens = defineMessage(
  c2m,
  'ListTokens',
  "List the users' tokens (the cluster secret only).",
  {},
  { reply: () => TokenList },
);

export const TokenList = defineMessage(c2m, 'TokenList', 'The answer to ListTokens.', {
  tokens: Type.Array(TokenEntry, { maxItems: MAX_TOKENS }),
});

export const RevokeToken = defineMessage(
  c2m,
  'RevokeToken',
  'Revoke the tokens of a name, or one token by id (the cluster secret only).',
  { nameOrId: Type.String({ minLength: 1, maxLength: 64 }) },
  { reply: () => TokenRevoked },
);

export const TokenRevoked = defineMessage(c2m, 'TokenRevoked', 'The answer to RevokeToken.', {
  revoked: Type.Array(TokenEntry, { maxItems: MAX_TOKENS }),
});

export const RequestSubmissionKey = defineMessage(
  c2m,
  'RequestSubmissionKey',
  "A token's holder asks for a submission's key, to start a client-mode driver with: the driver holds that key, never the token.",
  {},
  { reply: () => SubmissionKey },
);

export const SubmissionKey = defineMessage(
  c2m,
  'SubmissionKey',
  'The answer to RequestSubmissionKey.',
  {
    id: Type.String({ pattern: '^submission-[0-9a-f]{24}$', maxLength: 40 }),
    key: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }),
  },
);
