"""Wick's error codes (docs/protocol.md, "Errors") and the one error type the Python peers raise."""

import json

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
HANDLER_FAILED = -32000
ENDPOINT_NOT_FOUND = -32001
UNSUPPORTED_MESSAGE = -32002
RPC_ENV_STOPPED = -32003
FRAME_TOO_LARGE = -32004
AUTHENTICATION_FAILED = -32005
HANDSHAKE_REQUIRED = -32006
INVALID_REPLY = -32007  # local only
ASK_TIMEOUT = -32010  # local only
CONNECTION_CLOSED = -32011  # local only
CONNECT_FAILED = -32012  # local only
NOT_PERMITTED = -32030


class RpcError(Exception):
    """A JSON-RPC error, received or about to be sent: code, message, optional data."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Refused(RpcError):
    """A message refused for who sent it, or over which connection (NotPermitted): an ask is
    answered with it; the env logs it once per connection and message type."""

    def __init__(self, what, why):
        super().__init__(NOT_PERMITTED, "Not permitted: %s: %s" % (what, why))
        self.what = what
        self.why = why


def preview(value, limit=120):
    """A value as an error message quotes it: JSON, clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
