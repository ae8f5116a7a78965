#!/usr/bin/env python3
"""A Wick RPC peer in plain Python 3, written from docs/protocol.md and nothing else.

It connects to a Wick RpcEnv, does the handshake (authenticating when WICK_AUTH_SECRET is set),
checks that an endpoint exists through the env's endpoint verifier, asks it Ping a few times and
prints each Pong. It is a peer, not only a client: over the same connection it runs endpoints of
its own, an "endpoint-verifier" and one (named by --name) that answers Ping, so the Wick side can
ask it too, by its client-mode address.

Usage:
  rpc_ping.py HOST:PORT [--endpoint Echo] [--count 3] [--payload TEXT] [--name python]
              [--serve] [--timeout 30] [--trace]

  --serve   after the pings, keep answering asks until stdin reaches end of file or the Wick
            side hangs up
  --trace   copy every frame sent (->) and received (<-) to stderr

Environment:
  WICK_AUTH_SECRET  the shared secret of wick.authenticate; unset means no authentication

Standard output, one line per event:
  connected <wick-address> as <own-address> auth=<on|off>
  exists <endpoint>
  pong <seq> <payload as JSON, null when absent>
  serving <own-address> <endpoint-name>
  answered Ping <seq> from <address>

On failure it prints "error <code> <message>" on standard error and exits with status 1.
"""

import argparse
import hashlib
import hmac
import json
import os
import re
import secrets
import select
import socket
import sys
import time
from urllib.parse import quote

MAX_FRAME_BYTES = 128 * 1024 * 1024  # wick.rpc.message.maxSize's default
VERIFIER = "endpoint-verifier"
HEX64 = re.compile(r"[0-9a-f]{64}")
HEX_NONCE = re.compile(r"[0-9a-f]{32,128}")


class RpcError(Exception):
    """A JSON-RPC error, received or about to be sent: code, message, optional data."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


# The fields of the messages this peer reads or writes (docs/protocol.md, message catalogue):
# name -> (kind, required). Every message also has "type", and admits no other fields.
MESSAGES = {
    "CheckExistence": {"name": ("name", True)},
    "CheckExistenceResponse": {"exists": ("bool", True)},
    "Ping": {"seq": ("uint", True), "payload": ("str", False)},
    "Pong": {"seq": ("uint", True), "payload": ("str", False)},
}


def field_problem(kind, value):
    if kind == "bool":
        return None if isinstance(value, bool) else "must be boolean"
    if kind == "str":
        return None if isinstance(value, str) else "must be string"
    if kind == "name":
        ok = isinstance(value, str) and 1 <= len(value) <= 200
        return None if ok else "must be a string of 1 to 200 characters"
    if kind == "uint":
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ok = whole and not isinstance(value, bool) and value >= 0
        return None if ok else "must be an integer >= 0"
    return "has an unknown kind"


def message_problem(message):
    """None when the message matches its schema, else a sentence saying what is wrong."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "expected a message object with a string \"type\""
    fields = MESSAGES.get(message["type"])
    if fields is None:
        return "unknown message type %s" % message["type"]
    for name in message:
        if name != "type" and name not in fields:
            return "%s: field /%s is not allowed" % (message["type"], name)
    for name, (kind, required) in fields.items():
        if name not in message:
            if required:
                return "%s: field /%s is required" % (message["type"], name)
            continue
        problem = field_problem(kind, message[name])
        if problem:
            return "%s: field /%s %s, got %s" % (
                message["type"], name, problem, json.dumps(message[name]))
    return None


def hmac_hex(secret, text):
    return hmac.new(secret.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()


def parse_address(text):
    """host:port, [v6]:port or wick://host:port -> (host, port)."""
    if text.startswith("wick://"):
        text = text[len("wick://"):].rstrip("/")
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^:/\s\[\]]+):(\d{1,5})", text)
    if not m:
        raise ValueError("expected host:port, got %r" % text)
    host = m.group(1) or m.group(3)
    return host, int(m.group(2) or m.group(4))


class Peer:
    """One connection to a Wick RpcEnv, used in both directions."""

    def __init__(self, sock, address, name, trace):
        self.sock = sock
        self.address = address  # our own client-mode address, sent as "from"
        self.name = name  # the endpoint that answers Ping
        self.endpoints = {VERIFIER, name}
        self.trace = trace
        self.wick = None  # the other side's address, from the wick.hello result
        self.buffer = b""
        self.next_id = 1
        self.responses = {}
        self.closed = False

    # ---- framing: one JSON-RPC message per line ----

    def write(self, obj):
        line = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        if self.trace:
            print("-> " + line, file=sys.stderr, flush=True)
        self.sock.sendall(line.encode("utf-8") + b"\n")

    def read(self):
        """Reads what the socket has and handles every complete frame in it."""
        chunk = self.sock.recv(65536)
        if not chunk:
            self.closed = True
            return
        self.buffer += chunk
        while True:
            nl = self.buffer.find(b"\n")
            if nl < 0:
                break
            line, self.buffer = self.buffer[:nl], self.buffer[nl + 1:]
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > MAX_FRAME_BYTES:
                self.send_error(None, -32004, "Frame of %d bytes exceeds %d bytes"
                                % (len(line), MAX_FRAME_BYTES))
            elif line.strip():
                self.on_frame(line.decode("utf-8", "replace"))
        if len(self.buffer) > MAX_FRAME_BYTES:
            raise RpcError(-32004, "The peer sent a frame larger than %d bytes" % MAX_FRAME_BYTES)

    def on_frame(self, text):
        if self.trace:
            print("<- " + text, file=sys.stderr, flush=True)
        try:
            msg = json.loads(text)
        except ValueError as e:
            self.send_error(None, -32700, "Parse error: %s" % e)
            return
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            self.send_error(None, -32600, "Invalid Request: expected a JSON-RPC 2.0 object")
        elif "method" in msg:
            self.on_request(msg)
        elif "id" in msg and ("result" in msg or "error" in msg):
            if msg["id"] is None:  # the other side could not read a frame of ours
                print("warning: %s" % json.dumps(msg.get("error")), file=sys.stderr, flush=True)
            else:
                self.responses[msg["id"]] = msg
        else:
            self.send_error(msg.get("id"), -32600, "Invalid Request: neither request nor response")

    def send_error(self, rid, code, message):
        self.write({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    # ---- outgoing requests ----

    def call(self, method, params, timeout):
        """Sends a request and waits for its response, serving the other side meanwhile."""
        rid = self.next_id
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while rid not in self.responses:
            if self.closed:
                raise RpcError(-32011, "Connection to %s closed before the reply to %s came"
                               % (self.wick or "the peer", method))
            left = deadline - time.monotonic()
            if left <= 0:
                raise RpcError(-32010, "%s timed out after %s s" % (method, timeout))
            ready, _, _ = select.select([self.sock], [], [], left)
            if ready:
                self.read()
        response = self.responses.pop(rid)
        if "error" in response:
            e = response["error"] if isinstance(response["error"], dict) else {}
            raise RpcError(e.get("code"), e.get("message"), e.get("data"))
        return response.get("result")

    def ask(self, to, message, timeout):
        """Asks an endpoint of the other env; returns the reply message."""
        envelope = {"to": to, "from": self.address, "message": message}
        reply = self.call(message["type"], envelope, timeout)
        problem = message_problem(reply)
        if problem:
            raise RpcError(-32007, "Invalid reply to %s from wick://%s/%s: %s"
                           % (message["type"], self.wick, to, problem))
        return reply

    # ---- incoming requests: this peer's own endpoints ----

    def on_request(self, msg):
        method = msg.get("method")
        try:
            result = self.dispatch(method, msg.get("params"))
            if "id" in msg:
                self.write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        except RpcError as e:
            if "id" in msg:
                self.send_error(msg["id"], e.code, e.message)
            else:  # a one-way message gets no reply; say why it was dropped
                print("warning: dropped %s: %s" % (method, e.message), file=sys.stderr, flush=True)

    def dispatch(self, method, params):
        if method == "wick.hello":
            raise RpcError(-32600, "wick.hello was already received on this connection")
        if method == "wick.auth":
            raise RpcError(-32600, "wick.auth is only accepted right after wick.hello with a nonce")
        if method not in MESSAGES:
            raise RpcError(-32601, "Method not found: %s is not a Wick message type" % method)
        problem = self.envelope_problem(method, params)
        if problem:
            raise RpcError(-32602, "Invalid params: " + problem)
        to, sender, message = params["to"], params["from"], params["message"]
        if to not in self.endpoints:
            raise RpcError(-32001, "Cannot find endpoint: wick://%s/%s"
                           % (self.address, quote(to, safe="")))
        if to == VERIFIER and method == "CheckExistence":
            return {"type": "CheckExistenceResponse", "exists": message["name"] in self.endpoints}
        if to == self.name and method == "Ping":
            print("answered Ping %d from %s" % (message["seq"], sender), flush=True)
            pong = {"type": "Pong", "seq": message["seq"]}
            if "payload" in message:
                pong["payload"] = message["payload"]
            return pong
        raise RpcError(-32002, "Unsupported message %s from %s" % (method, sender))

    def envelope_problem(self, method, params):
        if not isinstance(params, dict) or set(params) != {"to", "from", "message"}:
            return "expected an envelope {to, from, message}"
        if not isinstance(params["to"], str) or not 1 <= len(params["to"]) <= 200:
            return "\"to\" must be an endpoint name of 1 to 200 characters"
        message = params["message"]
        if not isinstance(message, dict) or message.get("type") != method:
            return "message.type differs from method %s" % json.dumps(method)
        if params["from"] != self.wick:
            return "\"from\" is %s but this connection belongs to %s" % (
                json.dumps(params["from"]), self.wick)
        return message_problem(message)


def handshake(peer, secret, timeout):
    """wick.hello, then wick.auth when authenticating; sets peer.wick."""
    params = {"version": 1, "from": peer.address}
    nonce = secrets.token_hex(16) if secret else None
    if nonce:
        params["nonce"] = nonce
    result = peer.call("wick.hello", params, timeout)
    if not isinstance(result, dict) or result.get("version") != 1 \
            or not isinstance(result.get("from"), str):
        raise RpcError(-32600, "wick.hello answered with %s, not a HelloResult" % json.dumps(result))
    wick, challenge, proof = result["from"], result.get("challenge"), result.get("proof")
    if secret:
        if not challenge or not proof:
            raise RpcError(-32005, "Peer %s does not authenticate, but WICK_AUTH_SECRET is set here"
                           % wick)
        ok = isinstance(proof, str) and HEX64.fullmatch(proof) \
            and isinstance(challenge, str) and HEX_NONCE.fullmatch(challenge) \
            and hmac.compare_digest(proof, hmac_hex(secret, "wick-server:%s:%s" % (nonce, challenge)))
        if not ok:
            raise RpcError(-32005, "Peer %s failed authentication: its proof does not match our "
                           "secret; check that both sides use the same secret" % wick)
        client_proof = hmac_hex(secret, "wick-client:%s:%s" % (challenge, nonce))
        peer.call("wick.auth", {"proof": client_proof}, timeout)
    elif challenge:
        raise RpcError(-32005, "Peer %s requires authentication: set WICK_AUTH_SECRET" % wick)
    peer.wick = wick


def serve(peer):
    """Answers asks until stdin reaches end of file or the other side hangs up."""
    print("serving %s %s" % (peer.address, peer.name), flush=True)
    stdin = sys.stdin.fileno()
    watch = [peer.sock, stdin]
    while not peer.closed:
        ready, _, _ = select.select(watch, [], [])
        if stdin in ready and not os.read(stdin, 4096):
            return
        if peer.sock in ready:
            peer.read()


def main(argv):
    parser = argparse.ArgumentParser(description="Ask a Wick endpoint Ping, as a Wick peer.")
    parser.add_argument("address", help="the RpcEnv, host:port")
    parser.add_argument("--endpoint", default="Echo", help="the endpoint to ask (default Echo)")
    parser.add_argument("--count", type=int, default=3, help="how many Pings (default 3)")
    parser.add_argument("--payload", default="hello from python", help="the Ping payload")
    parser.add_argument("--name", default="python", help="this peer's endpoint that answers Ping")
    parser.add_argument("--serve", action="store_true", help="then answer asks until stdin EOF")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--trace", action="store_true", help="print every frame on stderr")
    args = parser.parse_args(argv)

    try:
        host, port = parse_address(args.address)
    except ValueError as e:
        parser.error(str(e))
    secret = os.environ.get("WICK_AUTH_SECRET") or None
    label = re.sub(r"[^A-Za-z0-9_.-]", "", args.name)[:40] or "env"
    address = "client-%s-%s" % (label, secrets.token_hex(6))

    try:
        sock = socket.create_connection((host, port), timeout=args.timeout)
    except OSError as e:
        print("error -32012 Failed to connect to wick://%s:%d: %s" % (host, port, e),
              file=sys.stderr)
        return 1
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    peer = Peer(sock, address, args.name, args.trace)
    try:
        handshake(peer, secret, args.timeout)
        print("connected %s as %s auth=%s" % (peer.wick, address, "on" if secret else "off"),
              flush=True)
        check = peer.ask(VERIFIER, {"type": "CheckExistence", "name": args.endpoint}, args.timeout)
        if check["type"] != "CheckExistenceResponse" or check["exists"] is not True:
            raise RpcError(-32001, "Cannot find endpoint: wick://%s/%s" % (peer.wick, args.endpoint))
        print("exists %s" % args.endpoint, flush=True)
        for seq in range(args.count):
            ping = {"type": "Ping", "seq": seq, "payload": "%s #%d" % (args.payload, seq)}
            pong = peer.ask(args.endpoint, ping, args.timeout)
            if pong["type"] != "Pong":
                raise RpcError(-32007, "expected Pong in reply to Ping, got %s" % pong["type"])
            print("pong %d %s" % (pong["seq"], json.dumps(pong.get("payload"))), flush=True)
        if args.serve:
            serve(peer)
        return 0
    except RpcError as e:
        print("error %s %s" % (e.code, e.message), file=sys.stderr, flush=True)
        return 1
    except OSError as e:
        print("error -32011 Connection to %s failed: %s" % (peer.wick or args.address, e),
              file=sys.stderr, flush=True)
        return 1
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
