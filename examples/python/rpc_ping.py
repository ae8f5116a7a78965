#!/usr/bin/env python3
"""A Wick RPC peer in plain Python 3, written from docs/protocol.md and nothing else.

The protocol itself (framing, handshake, envelope, checks) is in wick_rpc.py, which the Pi
example (pi_driver.py, executor.py) shares.

It connects to a Wick RpcEnv, does the handshake (proving the cluster secret, found as every Wick
process finds it, or open), checks that an endpoint exists through the env's endpoint verifier,
asks it Ping a few times and prints each Pong. It is a peer, not only a client: over the same connection it runs endpoints of
its own, an "endpoint-verifier" and one (named by --name) that answers Ping, so the Wick side can
ask it too, by its client-mode address.

Usage:
  rpc_ping.py HOST:PORT [--endpoint Echo] [--count 3] [--payload TEXT] [--name python]
              [--serve] [--timeout 30] [--conf KEY=VALUE ...] [--trace]

  --serve   after the pings, keep answering asks until stdin reaches end of file or the Wick
            side hangs up
  --conf    a setting: wick.authenticate=false runs open; wick.authenticate.secret=S or
            wick.authenticate.secret.file=PATH give the cluster secret
  --trace   copy every frame sent (->) and received (<-) to stderr

The cluster secret, first found wins: --conf wick.authenticate.secret, the file in --conf
wick.authenticate.secret.file, the environment variable WICK_AUTH_SECRET, then the default
secret file $XDG_CONFIG_HOME/wick/cluster-secret (~/.config/wick/cluster-secret), where a master
writes the one it generates. None of them, or wick.authenticate=false: no authentication.

Standard output, one line per event:
  connected <wick-address> as <own-address> auth=<on|off>
  exists <endpoint>
  pong <seq> <payload as JSON, null when absent>
  serving <own-address> <endpoint-name>
  answered Ping <seq> from <address>

On failure it prints "error <code> <message>" on standard error and exits with status 1.
"""

import argparse
import json
import os
import sys
import threading

from wick_auth import find_cluster_secret, parse_conf
from wick_rpc import VERIFIER, Endpoint, RpcEnv, RpcError, parse_address, unsupported
from wick_tls import WireTls


class PingEndpoint(Endpoint):
    """Answers Ping with a Pong carrying the same seq and payload; sets `gone` when the
    connection with the Wick env closes."""

    def __init__(self):
        self.wick = None
        self.gone = threading.Event()

    def on_disconnected(self, address):
        if address == self.wick:
            self.gone.set()

    def receive_and_reply(self, message, ctx):
        if message["type"] != "Ping":
            raise unsupported(message, ctx)
        print("answered Ping %d from %s" % (message["seq"], ctx.sender), flush=True)
        pong = {"type": "Pong", "seq": message["seq"]}
        if "payload" in message:
            pong["payload"] = message["payload"]
        return pong


def serve(env, name, gone):
    """Answers asks until stdin reaches end of file or the other side hangs up."""
    print("serving %s %s" % (env.address, name), flush=True)

    def read_stdin():
        while os.read(sys.stdin.fileno(), 4096):
            pass
        gone.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    gone.wait()


def main(argv):
    parser = argparse.ArgumentParser(description="Ask a Wick endpoint Ping, as a Wick peer.")
    parser.add_argument("address", help="the RpcEnv, host:port")
    parser.add_argument("--endpoint", default="Echo", help="the endpoint to ask (default Echo)")
    parser.add_argument("--count", type=int, default=3, help="how many Pings (default 3)")
    parser.add_argument("--payload", default="hello from python", help="the Ping payload")
    parser.add_argument("--name", default="python", help="this peer's endpoint that answers Ping")
    parser.add_argument("--serve", action="store_true", help="then answer asks until stdin EOF")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Wick setting, e.g. wick.authenticate=false (repeatable)")
    parser.add_argument("--trace", action="store_true", help="print every frame on stderr")
    args = parser.parse_args(argv)

    try:
        host, port = parse_address(args.address)
        conf = parse_conf(args.conf)
        secret = find_cluster_secret(conf).secret
        tls = WireTls.from_conf(conf)
    except ValueError as e:
        parser.error(str(e))
    wick = "%s:%d" % (host, port) if ":" not in host else "[%s]:%d" % (host, port)
    tls.note_master(wick)  # the address given: pinned when wick.ssl.fingerprint is set
    env = RpcEnv(args.name, secret=secret, trace=args.trace, connect_timeout=args.timeout,
                 ask_timeout=args.timeout, tls=tls)
    pinger = PingEndpoint()
    env.setup_endpoint(args.name, pinger)
    try:
        conn = env.connection_to(wick)
        wick = conn.peer  # the address it gave in the handshake
        pinger.wick = wick
        if conn.closed:
            pinger.gone.set()
        print("connected %s as %s auth=%s" % (wick, env.address, "on" if secret else "off"),
              flush=True)
        check = env.ask(wick, VERIFIER, {"type": "CheckExistence", "name": args.endpoint})
        if check["type"] != "CheckExistenceResponse" or check["exists"] is not True:
            raise RpcError(-32001, "Cannot find endpoint: wick://%s/%s" % (wick, args.endpoint))
        print("exists %s" % args.endpoint, flush=True)
        for seq in range(args.count):
            ping = {"type": "Ping", "seq": seq, "payload": "%s #%d" % (args.payload, seq)}
            pong = env.ask(wick, args.endpoint, ping)
            if pong["type"] != "Pong":
                raise RpcError(-32007, "expected Pong in reply to Ping, got %s" % pong["type"])
            print("pong %d %s" % (pong["seq"], json.dumps(pong.get("payload"))), flush=True)
        if args.serve:
            serve(env, args.name, pinger.gone)
        return 0
    except RpcError as e:
        print("error %s %s" % (e.code, e.message), file=sys.stderr, flush=True)
        return 1
    finally:
        env.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
