"""Wick RPC for Python programs: the wire protocol of docs/protocol.md, standard library only.

One module for every Python peer in this folder (rpc_ping.py, pi_driver.py, executor.py):

- framing: one JSON-RPC 2.0 message per line, UTF-8, "\\n"-terminated, at most MAX_FRAME_BYTES;
- the handshake, on both sides (wick_handshake.py): an env dials with a `credential` (the cluster
  secret, or a key derived from it for one submission or application: wick_auth.py) or none, and
  a listening env lets in the peers whose key `keys` gives, or anyone when keys is None (open);
- endpoint messages: the envelope {to, from, message}, send (a notification) and ask (a request
  whose result is the reply message), checked as Wick checks them and answered with Wick's error
  codes; every message is checked against its JSON Schema in docs/protocol/messages/;
- one connection per direction, as Wick's: what is sent to a listening host:port goes over a
  connection this env dialled there, never over one whose peer merely announced that address;
  a client-mode peer is reached over the connection it opened; send_over() writes to one
  connection alone (how a driver talks to the executor that registered on it);
- an "endpoint-verifier" in every env, and connect / disconnect events for endpoints.

Each handler's ctx names the connection the message came over and what its handshake proved
(ctx.connection, ctx.principal): check who may send a message against those, never against a
field the sender chose, and raise Refused(what, why) (-32030) when it may not.

Threads: each connection has a reader thread that hands every incoming message to its endpoint,
one message at a time per endpoint (an endpoint's handlers hold its lock). A handler may send,
but MUST NOT ask (its reply could only arrive through a reader thread that may be waiting for
it); ask from your own threads. Everything else here may be called from any thread.

    auth = find_cluster_secret({})                       # as every Wick process finds it
    env = RpcEnv("mine", secret=auth.secret)             # None: open
    env.setup_endpoint("me", MyEndpoint())
    env.setup_endpoint_ref("127.0.0.1:7077", "Master")   # connects, checks that it exists
    reply = env.ask("127.0.0.1:7077", "Master", {"type": "RequestMasterState"})
"""

import json
import os
import re
import secrets
import socket
import sys
import threading
import time
import traceback
from urllib.parse import quote, unquote

# AppKeys, Principal and find_cluster_secret too, for peers that import them from here.
from wick_auth import (AppKeys, Credential, Principal, cluster_credential,  # noqa: F401
                       cluster_keys, find_cluster_secret)
# The codes and errors, under the names wick_rpc has always given them.
from wick_errors import (ASK_TIMEOUT, AUTHENTICATION_FAILED, CONNECT_FAILED,  # noqa: F401
                         CONNECTION_CLOSED, ENDPOINT_NOT_FOUND, FRAME_TOO_LARGE, HANDLER_FAILED,
                         HANDSHAKE_REQUIRED, INVALID_PARAMS, INVALID_REPLY, INVALID_REQUEST,
                         METHOD_NOT_FOUND, NOT_PERMITTED, PARSE_ERROR, RPC_ENV_STOPPED,
                         UNSUPPORTED_MESSAGE, Refused, RpcError, preview)
from wick_handshake import PROTOCOL_VERSION, ClientHandshake, Refusal, ServerHandshake

MAX_FRAME_BYTES = 128 * 1024 * 1024  # wick.rpc.message.maxSize's default
VERIFIER = "endpoint-verifier"


# ---------------------------------------------------------------------------------------------
# Logging, in Wick's format: "yy/MM/dd HH:mm:ss LEVEL Component: text", on standard error.

_log_lock = threading.Lock()


def log(level, component, text, stream=None):
    line = "%s %s %s: %s\n" % (time.strftime("%y/%m/%d %H:%M:%S"), level, component, text)
    with _log_lock:
        out = stream or sys.stderr
        out.write(line)
        out.flush()


# ---------------------------------------------------------------------------------------------
# Message schemas: the JSON Schemas that `npm run schemas` writes to docs/protocol/messages/.
# WICK_PROTOCOL_DIR may point elsewhere (a copy of docs/protocol). Without them a peer still
# works, but only checks the envelope, not each message's fields.

_schemas = None
_schemas_lock = threading.Lock()


def protocol_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("WICK_PROTOCOL_DIR") or os.path.join(here, "..", "..", "docs", "protocol")


def schemas():
    """{message type: JSON Schema}, loaded once; {} when the schemas cannot be found."""
    global _schemas
    with _schemas_lock:
        if _schemas is None:
            folder = os.path.join(protocol_dir(), "messages")
            found = {}
            try:
                for name in sorted(os.listdir(folder)):
                    if name.endswith(".schema.json"):
                        with open(os.path.join(folder, name), encoding="utf-8") as f:
                            found[name[: -len(".schema.json")]] = json.load(f)
            except OSError as e:
                log("WARN", "WickRpc", "No message schemas in %s (%s): messages are not checked"
                    % (folder, e.strerror or e))
            _schemas = found
        return _schemas


def _json_type_ok(kind, value):
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if kind == "integer":
        return isinstance(value, int) or value.is_integer()
    return kind == "number"


def schema_problem(schema, value, path=""):
    """None when `value` matches the JSON Schema, else "field <path> <what is wrong>, got <value>".

    Covers the keywords Wick's generated schemas use: type, const, anyOf, properties, required,
    additionalProperties, patternProperties, items, minItems, minLength, maxLength, pattern,
    minimum, maximum.
    """
    where = "field %s" % path if path else "the message"

    def bad(what):
        return "%s %s, got %s" % (where, what, preview(value))

    if "anyOf" in schema:
        if all(schema_problem(s, value, path) for s in schema["anyOf"]):
            consts = [s["const"] for s in schema["anyOf"] if "const" in s]
            if len(consts) == len(schema["anyOf"]):
                return bad("expected one of %s" % ", ".join(json.dumps(c) for c in consts))
            return bad("matches none of its allowed shapes")
    kind = schema.get("type")
    if kind is not None and not _json_type_ok(kind, value):
        return bad("expected %s" % kind)
    if "const" in schema and value != schema["const"]:
        return bad("expected %s" % json.dumps(schema["const"]))
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return bad("expected a string of at least %d characters" % schema["minLength"])
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return bad("expected a string of at most %d characters" % schema["maxLength"])
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return bad("expected a string matching %s" % schema["pattern"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return bad("expected a number >= %s" % schema["minimum"])
        if "maximum" in schema and value > schema["maximum"]:
            return bad("expected a number <= %s" % schema["maximum"])
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return bad("expected at least %d items" % schema["minItems"])
        if "items" in schema:
            for i, item in enumerate(value):
                problem = schema_problem(schema["items"], item, "%s/%d" % (path, i))
                if problem:
                    return problem
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                return "field %s/%s is required" % (path, name)
        patterns = schema.get("patternProperties", {})
        for name, item in value.items():
            sub = "%s/%s" % (path, name)
            if name in props:
                problem = schema_problem(props[name], item, sub)
            else:
                matching = [s for p, s in patterns.items() if re.search(p, name)]
                if matching:
                    problem = schema_problem(matching[0], item, sub)
                elif schema.get("additionalProperties", True) is False:
                    problem = "field %s is not allowed, got %s" % (sub, preview(item))
                else:
                    problem = None
            if problem:
                return problem
    return None


def is_message_type(name):
    """Whether `name` is a Wick message type (True for anything when no schemas were found)."""
    known = schemas()
    return not known or name in known


def message_problem(message):
    """None when the message is an object with a known "type" that matches its schema."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "expected a message object with a string \"type\", got %s" % preview(message)
    known = schemas()
    if not known:
        return None
    schema = known.get(message["type"])
    if schema is None:
        return "unknown message type %s" % message["type"]
    problem = schema_problem(schema, message)
    return None if problem is None else "%s: %s" % (message["type"], problem)


# ---------------------------------------------------------------------------------------------
# Addresses

def parse_address(text):
    """host:port, [v6]:port or wick://host:port[/...] -> (host, port)."""
    if text.startswith("wick://"):
        text = text[len("wick://"):].split("/", 1)[0]
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^:/\s\[\]]+):(\d{1,5})", text)
    if not m or not 1 <= int(m.group(2) or m.group(4)) <= 65535:
        raise ValueError("expected host:port, got %r" % text)
    return m.group(1) or m.group(3), int(m.group(2) or m.group(4))


def host_port(host, port):
    return "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)


def parse_endpoint_uri(uri):
    """wick://host:port/Name -> ("host:port", "Name")."""
    m = re.fullmatch(r"wick://([^/]+)/(.+)", uri)
    if not m:
        raise ValueError("expected wick://host:port/Name, got %r" % uri)
    host, port = parse_address(m.group(1))
    return host_port(host, port), unquote(m.group(2))


def endpoint_uri(address, name):
    return "wick://%s/%s" % (address, quote(name, safe=""))


def is_client_address(address):
    return address.startswith("client-") and ":" not in address


# ---------------------------------------------------------------------------------------------
# Endpoints

class CallContext:
    """Who sent the message being handled, over which connection, and (for an ask) what to run
    after the reply."""

    def __init__(self, env, connection, to, is_ask):
        self.env = env
        self.connection = connection  # the Connection it came over
        self.sender = connection.peer  # the sending env's address
        self.principal = connection.principal  # what that connection's handshake proved
        self.to = to  # the endpoint name it was sent to
        self.is_ask = is_ask
        self.after_reply = []

    def later(self, fn):
        """Runs fn (under the endpoint's lock) once the reply, if any, has been written."""
        self.after_reply.append(fn)


def unsupported(message, ctx):
    return RpcError(UNSUPPORTED_MESSAGE, "Unsupported message %s from %s"
                    % (message.get("type"), ctx.sender))


class Endpoint:
    """Override receive (sends), receive_and_reply (asks) and the connection events you need."""

    def receive(self, message, ctx):
        raise unsupported(message, ctx)

    def receive_and_reply(self, message, ctx):
        raise unsupported(message, ctx)

    def on_connected(self, address):
        pass

    def on_disconnected(self, address):
        pass


class EndpointVerifier(Endpoint):
    def __init__(self, env):
        self.env = env

    def receive_and_reply(self, message, ctx):
        if message["type"] != "CheckExistence":
            raise unsupported(message, ctx)
        return {"type": "CheckExistenceResponse", "exists": message["name"] in self.env.endpoints}


# ---------------------------------------------------------------------------------------------
# Connections

class _Waiter:
    def __init__(self):
        self.event = threading.Event()
        self.response = None
        self.error = None


class Connection:
    """One TCP connection with another env, after its handshake used in both directions."""

    def __init__(self, env, sock, outbound, remote, binding=None):
        self.env = env
        self.sock = sock  # a socket, or a wick_tls.TlsStream over one
        self.binding = binding  # over TLS: the server certificate's fingerprint, which proofs end with
        self.outbound = outbound  # True: we dialled it (handshake client)
        self.remote = remote  # the socket's other end, for logs
        self.peer = None  # the other env's address, once the handshake is done
        self.principal = None  # what the peer proved (wick_auth.Principal), once open
        self.state = "new"  # client: hello-sent, auth-sent; server: handshake; then open
        self.failure = None  # why the handshake failed
        self.opened = threading.Event()  # set when open, or when the handshake failed
        self.closed = False
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pending = {}
        self._next_id = 1
        self._buffer = b""
        self._skipping = None  # bytes of an over-long frame dropped so far
        self._refusals = set()  # message types refused on this connection, logged once each
        self._client = None  # ClientHandshake, when we dialled
        self._server = None  # ServerHandshake, when the peer did
        self._hello_id = None
        self._auth_id = None

    # ---- lifecycle ----

    def start_client(self):
        self._client = ClientHandshake(self.env.address, self.env.credential, self.binding)
        self.state = "hello-sent"
        self._hello_id = self._take_id()
        self._start_reader()
        self._write({"jsonrpc": "2.0", "id": self._hello_id, "method": "wick.hello",
                     "params": self._client.hello_params()})

    def start_server(self):
        self._server = ServerHandshake(self.env.address, self.env.keys, self.binding)
        self.state = "handshake"
        self._start_reader()
        timer = threading.Timer(self.env.connect_timeout, self._handshake_timed_out)
        timer.daemon = True
        timer.start()

    def _start_reader(self):
        threading.Thread(target=self._read_loop, name="wick-rpc-%s" % self.remote,
                         daemon=True).start()

    def _handshake_timed_out(self):
        if self.state != "open" and not self.closed:
            log("WARN", "Connection", "Closing %s: no handshake within %s s"
                % (self.remote, self.env.connect_timeout))
            self.close()

    def close(self):
        """Closes at once; asks waiting on this connection fail with -32011."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    def finish_writing(self):
        """Half-closes: what was written is delivered, then the other side sees end of stream."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _fail_handshake(self, error):
        self.failure = error
        self.opened.set()
        self.close()

    def _open(self, opened):
        self.peer = opened.peer
        self.principal = opened.principal
        self.state = "open"
        self.env._connection_opened(self)
        self.opened.set()
        self.env._notify_connected(self)

    # ---- writing ----

    def _take_id(self):
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            return rid

    def _write(self, obj):
        line = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        data = line.encode("utf-8")
        if len(data) > self.env.max_frame_bytes:
            raise RpcError(FRAME_TOO_LARGE, "%s of %d bytes exceeds wick.rpc.message.maxSize (%d bytes)"
                           % (obj.get("method", "Reply"), len(data), self.env.max_frame_bytes))
        self.env._trace("->", self, line)
        with self._write_lock:
            try:
                self.sock.sendall(data + b"\n")
            except OSError as e:
                raise RpcError(CONNECTION_CLOSED, "Connection to %s closed: %s"
                               % (self.peer or self.remote, e.strerror or e))

    def _write_quietly(self, obj):
        try:
            self._write(obj)
        except RpcError as e:
            if e.code == FRAME_TOO_LARGE and "id" in obj and "result" in obj:
                self._write_quietly({"jsonrpc": "2.0", "id": obj["id"],
                                     "error": {"code": e.code, "message": e.message}})
            elif e.code != CONNECTION_CLOSED:
                log("WARN", "Connection", e.message)

    def _write_error(self, rid, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._write_quietly({"jsonrpc": "2.0", "id": rid, "error": error})

    def request(self, method, params, timeout):
        """Sends a request and waits for its response; returns its result or raises RpcError."""
        if self.closed:
            raise RpcError(CONNECTION_CLOSED, "Connection to %s closed" % (self.peer or self.remote))
        rid = self._take_id()
        waiter = _Waiter()
        with self._lock:
            self._pending[rid] = waiter
        try:
            self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            if not waiter.event.wait(timeout):
                raise RpcError(ASK_TIMEOUT, "Ask %s to %s timed out after %d ms"
                               % (method, self.peer or self.remote, timeout * 1000))
        finally:
            with self._lock:
                self._pending.pop(rid, None)
        if waiter.error:
            raise waiter.error
        response = waiter.response
        if "error" in response:
            e = response["error"]
            if not isinstance(e, dict) or not isinstance(e.get("code"), int) \
                    or not isinstance(e.get("message"), str):
                raise RpcError(INVALID_REQUEST, "Malformed error reply from %s: %s"
                               % (self.peer, preview(e)))
            raise RpcError(e["code"], e["message"], e.get("data"))
        return response.get("result")

    def notify(self, method, params):
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    # ---- reading ----

    def _read_loop(self):
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                self._feed(chunk)
        except OSError:
            pass
        finally:
            self._on_closed()

    def _on_closed(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass
        with self._lock:
            waiting = list(self._pending.values())
            self._pending.clear()
        for w in waiting:
            w.error = RpcError(CONNECTION_CLOSED, "Connection to %s closed"
                               % (self.peer or self.remote))
            w.event.set()
        if self._server is not None and self._server.awaiting_auth() and self.state != "refused":
            # A client that rejects our proof hangs up without wick.auth: say why on this side.
            log("WARN", "Connection", "Refused %s (%s): it hung up during authentication; its %s "
                "probably differs from ours" % (self._server.claimed_from, self.remote,
                                                 self._server.claimed_key_text()))
        if self.state != "open" and self.failure is None:
            self.failure = RpcError(CONNECTION_CLOSED, "%s closed the connection during the "
                                    "handshake" % self.remote)
        self.opened.set()
        self.env._connection_closed(self)

    def _feed(self, chunk):
        limit = self.env.max_frame_bytes
        if self._skipping is not None:
            nl = chunk.find(b"\n")
            if nl < 0:
                self._skipping += len(chunk)
                return
            self._too_large(self._skipping + nl)
            chunk = chunk[nl + 1:]
        self._buffer += chunk
        while True:
            nl = self._buffer.find(b"\n")
            if nl < 0:
                break
            line, self._buffer = self._buffer[:nl], self._buffer[nl + 1:]
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > limit:
                self._too_large(len(line))
            elif line.strip():
                self._on_frame(line.decode("utf-8", "replace"))
            if self.closed:
                return
        if len(self._buffer) > limit:
            self._skipping = len(self._buffer)
            self._buffer = b""

    def _too_large(self, size):
        self._skipping = None
        self._write_error(None, FRAME_TOO_LARGE, "Frame of %d bytes exceeds wick.rpc.message.maxSize"
                          " (%d bytes)" % (size, self.env.max_frame_bytes))

    def _on_frame(self, text):
        self.env._trace("<-", self, text)
        try:
            msg = json.loads(text, parse_constant=_no_constants)
        except ValueError as e:
            self._write_error(None, PARSE_ERROR, "Parse error: %s" % e)
            return
        if isinstance(msg, list):
            self._write_error(None, INVALID_REQUEST, "Invalid Request: batches are not supported; "
                              "send one JSON-RPC message per line")
            return
        if not isinstance(msg, dict):
            self._write_error(None, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 "
                              "object, got %s" % preview(msg))
            return
        rid = msg.get("id")
        if rid is not None and (isinstance(rid, bool) or not isinstance(rid, (str, int, float))):
            rid = None
        if msg.get("jsonrpc") != "2.0":
            self._write_error(rid, INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"")
            return
        is_response = "result" in msg or "error" in msg
        if "method" in msg:
            if is_response or not isinstance(msg["method"], str) \
                    or not isinstance(msg.get("params", {}), (dict, list)):
                self._write_error(rid, INVALID_REQUEST, "Invalid Request: needs a string "
                                  "\"method\", an optional id and object params")
                return
            self._on_request(msg)
        elif is_response and "id" in msg:
            self._on_response(msg)
        else:
            self._write_error(rid, INVALID_REQUEST, "Invalid Request: neither a request "
                              "(\"method\") nor a response (\"result\" or \"error\" with \"id\")")

    def _on_response(self, msg):
        rid = msg["id"]
        if self.state == "hello-sent" and rid == self._hello_id:
            self._client_hello_answered(msg)
            return
        if self.state == "auth-sent" and rid == self._auth_id:
            self._client_auth_answered(msg)
            return
        if rid is None:  # the other side could not read a frame of ours
            log("WARN", "Connection", "%s could not read a frame of ours: %s"
                % (self.peer or self.remote, preview(msg.get("error"))))
            return
        with self._lock:
            waiter = self._pending.get(rid)
        if waiter is not None:
            waiter.response = msg
            waiter.event.set()

    def _on_request(self, msg):
        method = msg["method"]
        is_ask = "id" in msg
        rid = msg.get("id")
        if self.state == "open":
            if method == "wick.hello":
                if is_ask:
                    self._write_error(rid, INVALID_REQUEST,
                                      "wick.hello was already received on this connection")
            elif method == "wick.auth":
                if is_ask:
                    self._write_error(rid, INVALID_REQUEST,
                                      "wick.auth is only accepted right after wick.hello with a nonce")
            elif method == "rpc.retire":
                pass  # older Wick said so on a duplicate connection; nothing to do now
            else:
                self.env._dispatch(self, msg)
            return
        if self.state == "refused":
            return  # hanging up: nothing more is read
        if not self.outbound and method == "wick.hello" and is_ask:
            self._server_step(rid, self._server.hello, msg.get("params"))
        elif not self.outbound and method == "wick.auth" and is_ask:
            self._server_step(rid, self._server.auth, msg.get("params"))
        elif is_ask:
            self._write_error(rid, HANDSHAKE_REQUIRED, "Finish the handshake (wick.hello, then "
                              "wick.auth when authenticating) before %s" % method)

    # ---- the handshake (wick_handshake.py has its logic; this moves the frames) ----

    def _client_hello_answered(self, msg):
        if "error" in msg:
            self._fail_handshake(_error_of(msg, INVALID_REQUEST, "wick.hello failed"))
            return
        try:
            auth = self._client.hello_answered(msg.get("result"), self.remote)
        except RpcError as e:
            log("WARN", "Connection", e.message)
            self._fail_handshake(e)  # without wick.auth: the server is not whom we may talk to
            return
        if auth is None:
            self._open(self._client.opened)
            return
        self.state = "auth-sent"
        self._auth_id = self._take_id()
        self._write_quietly({"jsonrpc": "2.0", "id": self._auth_id, "method": "wick.auth",
                             "params": auth})

    def _client_auth_answered(self, msg):
        if "error" in msg:
            self._fail_handshake(_error_of(msg, AUTHENTICATION_FAILED, "wick.auth failed"))
            return
        try:
            opened = self._client.auth_answered(msg.get("result"))
        except RpcError as e:
            self._fail_handshake(e)
            return
        self._open(opened)

    def _server_step(self, rid, step, params):
        """wick.hello or wick.auth from the peer: answer it, then open, stay, or hang up."""
        try:
            result, opened = step(params)
        except Refusal as r:
            self._refuse(rid, r)
            return
        except RpcError as e:
            self._write_error(rid, e.code, e.message)
            return
        self._write_quietly({"jsonrpc": "2.0", "id": rid, "result": result})
        if opened is not None:
            self._open(opened)

    def _refuse(self, rid, refusal):
        """Answers with the error, then ends the connection (half-close now, close in 1 s)."""
        log("WARN", "Connection", "Refused %s (%s): %s"
            % (self._server.claimed_from, self.remote, refusal.why))
        self._write_error(rid, AUTHENTICATION_FAILED, refusal.reply)
        self.state = "refused"
        self.finish_writing()
        timer = threading.Timer(1.0, self.close)
        timer.daemon = True
        timer.start()


def _error_of(msg, code, fallback):
    e = msg["error"] if isinstance(msg["error"], dict) else {}
    return RpcError(e.get("code", code), e.get("message", fallback))


def _no_constants(name):
    raise ValueError("%s is not JSON" % name)


# ---------------------------------------------------------------------------------------------
# The env

class RpcEnv:
    """A process's node in the RPC network: its address, its endpoints, its connections.

    host=None: client mode, address client-<name>-<12 hex digits>; Wick reaches it only over
    connections it opened. Otherwise it listens on host:port (port 0: any free port) and its
    address is host:port (advertise_host:port when given: the name peers reach it by, for an env
    that listens on every interface).

    Authentication (wick_auth.py): `credential` is what it proves when it dials (None: nothing,
    open); `keys(kind, id)` the key it requires of a peer that dials it claiming kind:id, None
    to refuse that peer (keys=None: anyone gets in, unproven). `secret` is the cluster secret's
    holder's shorthand for both: it proves the secret and accepts every key derived from it.
    """

    def __init__(self, name="python", host=None, port=0, secret=None, credential=None, keys=None,
                 trace=False, connect_timeout=30.0, ask_timeout=120.0,
                 max_frame_bytes=MAX_FRAME_BYTES, advertise_host=None, tls=None):
        if secret:
            credential = credential or cluster_credential(secret)
            keys = keys if keys is not None else cluster_keys(secret)
        if credential is not None and not isinstance(credential, Credential):
            raise TypeError("credential: expected a wick_auth.Credential, got %r" % (credential,))
        self.credential = credential
        self.keys = keys
        # wick_tls.WireTls: TLS where Wick's rule says (None: plain everywhere, as before TLS)
        self.tls = tls
        self.tls_server = None  # what the listener serves: a wick_tls.TlsServer, or None (plain)
        self.trace = trace
        self.connect_timeout = connect_timeout
        self.ask_timeout = ask_timeout
        self.max_frame_bytes = max_frame_bytes
        self.endpoints = {}
        self._endpoint_locks = {}
        self._lock = threading.RLock()
        self._dial_lock = threading.Lock()
        self._connections = {}  # peer address -> [open Connection]
        self._all = set()  # every Connection not yet closed
        self.stopped = False
        self.listener = None
        if host is None:
            label = re.sub(r"[^A-Za-z0-9_.-]", "", name)[:40] or "env"
            self.address = "client-%s-%s" % (label, secrets.token_hex(6))
        else:
            self.tls_server = tls.server(host or "0.0.0.0", name) if tls is not None else None
            self.listener = socket.create_server((host, port), family=_family(host))
            bound = self.listener.getsockname()[1]
            advertise = advertise_host or (socket.gethostname() if host in ("", "0.0.0.0", "::")
                                           else host)
            self.address = host_port(advertise, bound)
            if self.tls_server is not None:
                log("INFO", "RpcEnv", "Serving TLS 1.3 on %s (certificate %s, %s)"
                    % (self.address, self.tls_server.fingerprint, self.tls_server.source))
            threading.Thread(target=self._accept_loop, name="wick-rpc-accept", daemon=True).start()
        self.setup_endpoint(VERIFIER, EndpointVerifier(self))

    def setup_endpoint(self, name, endpoint):
        with self._lock:
            if name in self.endpoints:
                raise ValueError("There is already an endpoint called %s" % name)
            self.endpoints[name] = endpoint
            # One lock per endpoint object: one message at a time, whatever name it came to.
            self._endpoint_locks.setdefault(id(endpoint), threading.RLock())

    def endpoint_lock(self, endpoint):
        return self._endpoint_locks[id(endpoint)]

    # ---- outgoing ----

    @property
    def authenticates(self):
        return self.credential is not None or self.keys is not None

    def connection_to(self, address):
        """The connection what is sent to `address` goes over: for a client-mode env, the newest
        one it opened to us; for a listening one, one we dialled, dialling it if none is open.
        Never a connection whose peer merely announced a listening address in its wick.hello:
        anyone can announce any address, and would receive what is meant for that env."""
        if self.stopped:
            raise RpcError(RPC_ENV_STOPPED, "RpcEnv stopped")
        conn = self._carrier(address)
        if conn is not None:
            return conn
        if is_client_address(address):
            raise RpcError(CONNECT_FAILED, "No connection to client-mode RpcEnv %s: it can only "
                           "be reached over a connection it opened, and it has none open now"
                           % address)
        with self._dial_lock:
            conn = self._carrier(address)
            return conn if conn is not None else self._dial(address)

    def _carrier(self, address):
        with self._lock:
            conns = self._connections.get(address, [])
            if is_client_address(address):
                theirs = [c for c in conns if not c.outbound]
                return theirs[-1] if theirs else None
            return next((c for c in conns if c.outbound), None)

    def _dial(self, address):
        try:
            host, port = parse_address(address)
        except ValueError as e:
            raise RpcError(CONNECT_FAILED, "Failed to connect to wick://%s: %s" % (address, e))
        try:
            sock = socket.create_connection((host, port), timeout=self.connect_timeout)
        except OSError as e:
            raise RpcError(CONNECT_FAILED, "Failed to connect to wick://%s: %s"
                           % (address, e.strerror or e))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        binding = None
        if self.tls is not None:
            try:
                sock, binding = self.tls.dial(sock, host, address, self.connect_timeout)
            except RpcError as e:
                log("WARN", "Connection", e.message)
                raise
        sock.settimeout(None)
        conn = Connection(self, sock, True, address, binding)
        with self._lock:
            self._all.add(conn)
        conn.start_client()
        if not conn.opened.wait(self.connect_timeout):
            conn.close()
            raise RpcError(CONNECT_FAILED, "Failed to connect to wick://%s: no handshake within "
                           "%s s" % (address, self.connect_timeout))
        if conn.failure is not None:
            f = conn.failure
            if f.code == AUTHENTICATION_FAILED:
                raise f
            raise RpcError(CONNECT_FAILED, "Failed to connect to wick://%s: %s"
                           % (address, f.message))
        return conn

    def envelope(self, to, message):
        return {"to": to, "from": self.address, "message": message}

    def send(self, address, to, message):
        """One-way: no reply, ever. Raises RpcError if it cannot be written."""
        self.connection_to(address).notify(message["type"], self.envelope(to, message))

    def send_over(self, conn, to, message):
        """One-way, over `conn` alone (a ref bound to a connection, as Wick's refOver): fails once
        that connection has closed, rather than reach whoever else has its peer's address."""
        if self.stopped:
            raise RpcError(RPC_ENV_STOPPED, "RpcEnv stopped")
        if conn.closed or conn.state != "open":
            raise RpcError(CONNECTION_CLOSED, "Connection to %s closed"
                           % (conn.peer or conn.remote))
        conn.notify(message["type"], self.envelope(to, message))

    def ask(self, address, to, message, timeout=None):
        """Asks an endpoint of another env; returns its reply message (checked) or raises."""
        conn = self.connection_to(address)
        reply = conn.request(message["type"], self.envelope(to, message),
                             self.ask_timeout if timeout is None else timeout)
        problem = message_problem(reply)
        if problem:
            raise RpcError(INVALID_REPLY, "Invalid reply to %s from %s: %s"
                           % (message["type"], endpoint_uri(address, to), problem))
        return reply

    def setup_endpoint_ref(self, address, name, timeout=None):
        """Connects to `address` and checks through its verifier that `name` exists there."""
        reply = self.ask(address, VERIFIER, {"type": "CheckExistence", "name": name}, timeout)
        if reply.get("type") != "CheckExistenceResponse" or reply.get("exists") is not True:
            raise RpcError(ENDPOINT_NOT_FOUND, "Cannot find endpoint: %s" % endpoint_uri(address, name))

    def is_connected(self, address):
        with self._lock:
            return bool(self._connections.get(address))

    # ---- incoming ----

    def _accept_loop(self):
        while True:
            try:
                sock, remote = self.listener.accept()
            except OSError:
                return
            if self.stopped:
                sock.close()
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls_server is None:
                self._accepted(sock, remote, None)
            else:  # the TLS front reads from the peer: not on the thread that accepts
                threading.Thread(target=self._accept_tls, args=(sock, remote),
                                 name="wick-tls-%s" % remote[0], daemon=True).start()

    def _accept_tls(self, sock, remote):
        served = self.tls_server.accept(sock, remote[0], self.address, self.connect_timeout)
        if served is not None and not self.stopped:
            self._accepted(served[0], remote, served[1])

    def _accepted(self, sock, remote, binding):
        conn = Connection(self, sock, False, host_port(remote[0], remote[1]), binding)
        with self._lock:
            self._all.add(conn)
        conn.start_server()

    def _dispatch(self, conn, msg):
        """Delivers one message to its endpoint, checking it as Wick does, and answers an ask."""
        method = msg["method"]
        is_ask = "id" in msg
        rid = msg.get("id")
        params = msg.get("params")
        ctx = None
        endpoint = None
        try:
            if not is_message_type(method):
                raise RpcError(METHOD_NOT_FOUND, "Method not found: %s is not a Wick message type"
                               % method)
            if not isinstance(params, dict) or set(params) != {"to", "from", "message"} \
                    or not isinstance(params["to"], str) or not 1 <= len(params["to"]) <= 200 \
                    or not isinstance(params["from"], str) or not isinstance(params["message"], dict):
                raise RpcError(INVALID_PARAMS, "Invalid params: expected an envelope "
                               "{to, from, message}")
            message = params["message"]
            if message.get("type") != method:
                raise RpcError(INVALID_PARAMS, "Invalid params: message.type %s differs from "
                               "method %s" % (preview(message.get("type")), json.dumps(method)))
            if params["from"] != conn.peer:
                raise RpcError(INVALID_PARAMS, "Invalid params: \"from\" is %s but this connection "
                               "belongs to %s" % (json.dumps(params["from"]), conn.peer))
            problem = message_problem(message)
            if problem:
                raise RpcError(INVALID_PARAMS, "Invalid params: %s" % problem)
            endpoint = self.endpoints.get(params["to"])
            if endpoint is None:
                raise RpcError(ENDPOINT_NOT_FOUND, "Cannot find endpoint: %s"
                               % endpoint_uri(self.address, params["to"]))
            if self.stopped:
                raise RpcError(RPC_ENV_STOPPED, "RpcEnv stopped: endpoint %s is stopped"
                               % params["to"])
            ctx = CallContext(self, conn, params["to"], is_ask)
            with self.endpoint_lock(endpoint):
                if is_ask:
                    reply = endpoint.receive_and_reply(message, ctx)
                else:
                    endpoint.receive(message, ctx)
            if is_ask:
                self._check_own_reply(method, reply)
                conn._write_quietly({"jsonrpc": "2.0", "id": rid, "result": reply})
        except RpcError as e:
            if isinstance(e, Refused):
                self._log_refusal(conn, method, e)
            elif not is_ask:
                log("WARN", "Dispatcher", "Dropped %s from %s: %s" % (method, conn.peer, e.message))
            if is_ask:
                conn._write_error(rid, e.code, e.message, e.data)
            return
        except Exception as e:  # the handler failed
            stack = traceback.format_exc()
            if is_ask:
                conn._write_error(rid, HANDLER_FAILED, str(e) or type(e).__name__,
                                  {"errorName": type(e).__name__, "remoteStack": stack})
            else:
                log("ERROR", "Dispatcher", "Handling %s from %s failed:\n%s"
                    % (method, conn.peer, stack))
            return
        for fn in ctx.after_reply:
            self._run_guarded(endpoint, fn)

    def _log_refusal(self, conn, method, refused):
        """Once per connection and message type: a peer that keeps trying fills no log."""
        if method in conn._refusals:
            return
        conn._refusals.add(method)
        log("WARN", "Refused", "Refused %s from %s (%s, %s): %s (further %s refusals on this "
            "connection are not logged)" % (refused.what, conn.peer, conn.principal.text(),
                                            "outbound" if conn.outbound else "inbound",
                                            refused.why, method))

    def _check_own_reply(self, method, reply):
        problem = message_problem(reply)
        if problem:
            raise RpcError(HANDLER_FAILED, "This peer's reply to %s is invalid: %s" % (method, problem))

    def _run_guarded(self, endpoint, fn):
        try:
            with self.endpoint_lock(endpoint):
                fn()
        except Exception:
            log("ERROR", "Dispatcher", "An endpoint hook failed:\n%s" % traceback.format_exc())

    def _connection_opened(self, conn):
        with self._lock:
            self._connections.setdefault(conn.peer, []).append(conn)

    def _notify_connected(self, conn):
        """on_connected once a peer's first connection opens (two listening envs that talk both
        ways keep two, one dialled by each, as Wick's do)."""
        with self._lock:
            if self._connections.get(conn.peer, [None])[0] is not conn:
                return
            endpoints = list(dict.fromkeys(self.endpoints.values()))
        for e in endpoints:
            self._run_guarded(e, lambda e=e: e.on_connected(conn.peer))

    def _connection_closed(self, conn):
        with self._lock:
            self._all.discard(conn)
            if conn.peer is None or conn.state != "open":
                return
            conns = self._connections.get(conn.peer, [])
            if conn in conns:
                conns.remove(conn)
            if conns:
                return
            self._connections.pop(conn.peer, None)
            endpoints = list(dict.fromkeys(self.endpoints.values()))
        for e in endpoints:
            self._run_guarded(e, lambda e=e: e.on_disconnected(conn.peer))

    def _trace(self, arrow, conn, line):
        if self.trace:
            label = "" if self.listener is None else "%s " % (conn.peer or conn.remote)
            with _log_lock:
                sys.stderr.write("%s %s%s\n" % (arrow, label, line))
                sys.stderr.flush()

    # ---- stopping ----

    def stop(self, patience=5.0):
        """Stops listening and closes every connection after what was written is delivered."""
        if self.stopped:
            return
        self.stopped = True
        if self.listener is not None:
            try:
                self.listener.close()
            except OSError:
                pass
        with self._lock:
            conns = list(self._all)
        for c in conns:
            c.finish_writing()
        deadline = time.monotonic() + patience
        for c in conns:
            # The other side closes its end once it has read ours.
            while not c.closed and time.monotonic() < deadline:
                time.sleep(0.01)
            c.close()


def _family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET
