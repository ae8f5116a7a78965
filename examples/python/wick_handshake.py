"""Both sides of the handshake (docs/protocol.md, "The handshake"), apart from the socket.

Each side is a small state machine over the peer's params and results: it says what to answer
and, once the peer is in, what it proved (its Principal). wick_rpc.Connection moves the frames,
logs, and closes the connection when a side raises Refused or RpcError(AUTHENTICATION_FAILED).
Proofs are HMAC-SHA256 over fresh nonces, keyed with the text of the key the client claims:
the cluster secret, or a key derived from it (wick_auth.py). The messages are Wick's own, so a
user reads the same words whichever side is Python.
"""

import hmac
import re
import secrets
from collections import namedtuple

from wick_auth import CLUSTER, ID_PATTERN, OPEN, Principal, client_proof, key_text, server_proof
from wick_errors import AUTHENTICATION_FAILED, INVALID_PARAMS, INVALID_REQUEST, RpcError, preview

PROTOCOL_VERSION = 1
HEX_NONCE = re.compile(r"[0-9a-f]{32,128}")
HEX_PROOF = re.compile(r"[0-9a-f]{64}")
WHERE_THE_SECRET_IS = ("the cluster secret (WICK_AUTH_SECRET, wick.authenticate.secret or "
                       "wick.authenticate.secret.file; a master prints how on first start)")

Opened = namedtuple("Opened", "peer principal")


class Refusal(Exception):
    """The server refuses the peer: `reply` goes to it, `why` to this side's log; then it hangs
    up."""

    def __init__(self, reply, why):
        super().__init__(why)
        self.reply = reply
        self.why = why


def server_principal(credential):
    """Who a server is that proved the key we dialled with: the cluster, for the secret or a
    submission's key (nobody else derives one); for an app's key, that app's driver (or the
    cluster, which derives it too)."""
    if credential is None:
        return OPEN
    return Principal("app", credential.id) if credential.kind == "app" else CLUSTER


class ClientHandshake:
    """The dialling side. hello_params() -> wick.hello; hello_answered(result) -> the wick.auth
    params, or None when open (then `opened` is set); auth_answered(result) -> Opened. Raises
    RpcError when the server is not the one we may talk to."""

    def __init__(self, address, credential, binding=None):
        self.address = address
        self.credential = credential
        self.binding = binding  # the server certificate's fingerprint over TLS, else None
        self.nonce = secrets.token_hex(16) if credential is not None else None
        self.server = None
        self.opened = None

    def hello_params(self):
        params = {"version": PROTOCOL_VERSION, "from": self.address}
        if self.nonce:
            params["nonce"] = self.nonce
        c = self.credential
        if c is not None and c.kind != "cluster":
            params["credential"] = {"kind": c.kind, "id": c.id}
        return params

    def hello_answered(self, result, remote):
        ok = isinstance(result, dict) and result.get("version") == PROTOCOL_VERSION \
            and isinstance(result.get("from"), str) and 1 <= len(result["from"]) <= 300 \
            and set(result) <= {"version", "from", "challenge", "proof"}
        if not ok:
            raise RpcError(INVALID_REQUEST, "Peer %s answered wick.hello with %s, which is not a "
                           "valid HelloResult" % (remote, preview(result)))
        server, challenge, proof = result["from"], result.get("challenge"), result.get("proof")
        c = self.credential
        if c is None:
            if challenge is not None:
                raise RpcError(AUTHENTICATION_FAILED, "Peer %s requires authentication: give this "
                               "process %s" % (server, WHERE_THE_SECRET_IS))
            self.opened = Opened(server, OPEN)
            return None
        if challenge is None or proof is None:
            raise RpcError(AUTHENTICATION_FAILED, "Peer %s does not authenticate (it runs open, "
                           "wick.authenticate=false); set wick.authenticate=false here too to "
                           "talk to it" % server)
        if not (isinstance(challenge, str) and HEX_NONCE.fullmatch(challenge)
                and isinstance(proof, str) and HEX_PROOF.fullmatch(proof)
                and hmac.compare_digest(proof, server_proof(c.key, self.nonce, challenge,
                                                             self.binding))):
            # We hang up without wick.auth: the server does not hold our key.
            raise RpcError(AUTHENTICATION_FAILED, "Peer %s failed authentication: its proof does "
                           "not match our %s; check that both sides use the same cluster secret"
                           % (server, key_text(c.kind, c.id)))
        self.server = server
        return {"proof": client_proof(c.key, self.nonce, challenge, self.binding)}

    def auth_answered(self, result):
        if result != {"ok": True}:
            raise RpcError(INVALID_REQUEST, "Peer %s answered wick.auth with %s"
                           % (self.server, preview(result)))
        return Opened(self.server, server_principal(self.credential))


class ServerHandshake:
    """The accepting side. hello(params) -> (result, Opened or None); auth(params) -> (result,
    Opened). `keys` is key_for(kind, id) -> the key a peer claiming kind:id must prove, or None
    to refuse it; keys=None runs open. Raises Refusal (answer, then hang up) or RpcError
    (answer, stay open: the peer may try again)."""

    def __init__(self, address, keys, binding=None):
        self.address = address
        self.keys = keys
        self.binding = binding  # our certificate's fingerprint over TLS, else None
        self.expecting = "hello"
        self.claimed_from = None  # the peer's address, as its wick.hello gave it
        self.claimed = None  # the Principal it claims
        self._key = None
        self._nonce = None
        self._challenge = None

    def hello(self, params):
        if self.expecting != "hello":
            raise RpcError(INVALID_REQUEST, "wick.hello was already received on this connection")
        problem = hello_params_problem(params)
        if problem:
            raise RpcError(INVALID_PARAMS, "Invalid wick.hello params: %s" % problem)
        self.claimed_from = params["from"]
        nonce = params.get("nonce")
        result = {"version": PROTOCOL_VERSION, "from": self.address}
        if self.keys is None:
            if nonce is not None:
                raise Refusal("This RpcEnv runs open (wick.authenticate=false): connect without a "
                              "secret, or give it the cluster secret",
                              "it asked to authenticate, but this side runs open "
                              "(wick.authenticate=false)")
            self.expecting = "nothing"
            return result, Opened(self.claimed_from, OPEN)
        if nonce is None:
            raise Refusal("Authentication required: give this process %s" % WHERE_THE_SECRET_IS,
                          "it did not authenticate, and authentication is on here")
        named = params.get("credential")
        claimed = Principal(named["kind"], named["id"]) if named else CLUSTER
        key = self.keys(claimed.kind, claimed.id)
        if key is None:
            raise Refusal("This RpcEnv does not accept %s keys" % claimed.text(),
                          "it presents a %s key, which this side does not accept" % claimed.text())
        self.claimed, self._key, self._nonce = claimed, key, nonce
        self._challenge = secrets.token_hex(16)
        self.expecting = "auth"
        result["challenge"] = self._challenge
        result["proof"] = server_proof(key, nonce, self._challenge, self.binding)
        return result, None

    def auth(self, params):
        if self.expecting != "auth":
            raise RpcError(INVALID_REQUEST,
                           "wick.auth is only accepted right after wick.hello with a nonce")
        proof = params.get("proof") if isinstance(params, dict) else None
        expected = client_proof(self._key, self._nonce, self._challenge, self.binding)
        if not (isinstance(params, dict) and set(params) == {"proof"} and isinstance(proof, str)
                and HEX_PROOF.fullmatch(proof) and hmac.compare_digest(proof, expected)):
            raise Refusal("Authentication failed: check that both sides use the same cluster "
                          "secret", "authentication failed, its proof does not match our %s"
                          % key_text(self.claimed.kind, self.claimed.id))
        self.expecting = "nothing"
        return {"ok": True}, Opened(self.claimed_from, self.claimed)

    def awaiting_auth(self):
        return self.expecting == "auth"

    def claimed_key_text(self):
        c = self.claimed or CLUSTER
        return key_text(c.kind, c.id)


def hello_params_problem(params):
    """None when `params` is a valid HelloParams, else what is wrong, as Wick words it."""
    if not isinstance(params, dict):
        return "/ Expected object"
    for name in params:
        if name not in ("version", "from", "nonce", "credential"):
            return "/%s is not allowed" % name
    if params.get("version") != PROTOCOL_VERSION or isinstance(params.get("version"), bool):
        return "/version Expected %d" % PROTOCOL_VERSION
    sender = params.get("from")
    if not isinstance(sender, str) or not 1 <= len(sender) <= 300:
        return "/from Expected a string of 1 to 300 characters"
    nonce = params.get("nonce")
    if nonce is not None and not (isinstance(nonce, str) and HEX_NONCE.fullmatch(nonce)):
        return "/nonce Expected 32 to 128 lowercase hex digits"
    if "credential" in params:
        c = params["credential"]
        if not isinstance(c, dict) or set(c) != {"kind", "id"}:
            return "/credential Expected an object {kind, id}"
        if c["kind"] not in ("submission", "app"):
            return "/credential/kind Expected \"submission\" or \"app\""
        if not (isinstance(c["id"], str) and ID_PATTERN.fullmatch(c["id"])):
            return "/credential/id Expected 1 to 200 characters of [A-Za-z0-9._-]"
    return None

