import { Type } from '@sinclair/typebox';
import { MAX_ADDRESS_LENGTH, MAX_COUNTER, MAX_PAYLOAD_LENGTH } from './bounds.js';
import { boundary, defineMessage } from './registry.js';

/**
 * The RPC layer's own messages: the connection handshake (methods `wick.hello` and `wick.auth`,
 * which are not endpoint messages) and the endpoint verifier every RpcEnv runs.
 */

/** The identity of an RpcEnv: `host:port` for one that listens, `client-<id>` for a client. */
export const EnvAddress = Type.String({
  minLength: 1,
  maxLength: MAX_ADDRESS_LENGTH,
  description: 'An RpcEnv: "host:port" when it listens, "client-<id>" in client mode.',
});

/** A reference to an endpoint that can travel inside a message. */
export const EndpointRefData = Type.Object(
  { address: EnvAddress, name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false, description: 'An endpoint: its RpcEnv and its name.' },
);

/** The params of every endpoint message: the envelope. */
export const Envelope = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 200, description: 'The receiving endpoint.' }),
    from: EnvAddress,
    message: Type.Object(
      { type: Type.String({ maxLength: 200 }) },
      { additionalProperties: true, description: 'The message, with its type repeated.' },
    ),
  },
  { $id: 'Envelope', title: 'Envelope', additionalProperties: false },
);

export const HelloParams = Type.Object(
  {
    version: Type.Literal(1),
    from: EnvAddress,
    nonce: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{32,128}$',
        maxLength: 128,
        description: 'Client nonce (hex) when authenticating.',
      }),
    ),
    credential: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([
            Type.Literal('submission'),
            Type.Literal('app'),
            Type.Literal('token'),
          ]),
          id: Type.String({ pattern: '^[A-Za-z0-9._-]{1,200}$', maxLength: 200 }),
        },
        {
          additionalProperties: false,
          description:
            'With a nonce: the key the proofs use, when it is not the cluster secret — the key derived for this submission, application or user token (docs/protocol.md, "Who may do what").',
        },
      ),
    ),
  },
  { $id: 'HelloParams', title: 'wick.hello params', additionalProperties: false },
);

export const HelloResult = Type.Object(
  {
    version: Type.Literal(1),
    from: EnvAddress,
    challenge: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32,128}$', maxLength: 128 })),
    proof: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 })),
  },
  { $id: 'HelloResult', title: 'wick.hello result', additionalProperties: false },
);

export const AuthParams = Type.Object(
  { proof: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }) },
  { $id: 'AuthParams', title: 'wick.auth params', additionalProperties: false },
);

const verifier = boundary('RpcEnv ↔ RpcEnv (endpoint verifier)', 'any', 'any');

export const CheckExistence = defineMessage(
  verifier,
  'CheckExistence',
  'Asks the "endpoint-verifier" endpoint whether an endpoint of this name is registered.',
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { reply: () => CheckExistenceResponse },
);

export const CheckExistenceResponse = defineMessage(
  verifier,
  'CheckExistenceResponse',
  'The answer to CheckExistence.',
  { exists: Type.Boolean() },
);

const diagnostics = boundary('Any peer → any endpoint (diagnostics)', 'any', 'any');

export const Ping = defineMessage(
  diagnostics,
  'Ping',
  'Asks an endpoint that supports it to answer Pong with the same payload; used by health checks, the demo and benchmarks.',
  {
    seq: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
    payload: Type.Optional(Type.String({ maxLength: MAX_PAYLOAD_LENGTH })),
  },
  { reply: () => Pong },
);

export const Pong = defineMessage(diagnostics, 'Pong', 'The answer to Ping.', {
  seq: Type.Integer({ minimum: 0, maximum: MAX_COUNTER }),
  payload: Type.Optional(Type.String({ maxLength: MAX_PAYLOAD_LENGTH })),
});
