import { wickProtocol } from '../../backend/protocol/index.js';
import * as testMessages from '../fixtures/testMessages.js';

/** What a test's RpcEnvs accept: Wick's protocol and the messages only tests use. */
export const testProtocol = wickProtocol.with(testMessages);
