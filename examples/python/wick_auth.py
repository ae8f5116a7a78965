"""Who a Python peer proves itself to be, and whom it lets in (docs/protocol.md, "Who may do what").

There is one cluster secret, held by the master, the workers and the operator's tools. Every
other key is derived from it for one holder, HMAC-SHA256(secret, "wick-<kind>-key:<id>"), so an
application's processes hold a key that opens nothing but their own application:

- cluster: the secret itself (rpc_ping.py; pi_driver.py when its user holds the secret);
- submission:<id>: a driver before it registers (`wick submit` or a worker hands it one);
- app:<id>: one application's processes. Its driver learns the key from RegisteredApplication
  and lets in only connections that prove it; its executors get it from their worker.

A driver or executor started by Wick gets its key in WICK_APP_CREDENTIAL, never the secret.
Standard library only, as the rest of this folder.
"""

import hashlib
import hmac
import os
import re
from collections import namedtuple

APP_CREDENTIAL_ENV = "WICK_APP_CREDENTIAL"
SECRET_ENV = "WICK_AUTH_SECRET"
MIN_SECRET_LENGTH = 16  # what Wick refuses below: a generated secret has 128 bits
MAX_SECRET_LENGTH = 1024
ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,200}")
_CREDENTIAL = re.compile(r"(submission|app):([A-Za-z0-9._-]{1,200}):([0-9a-f]{64})")


class Credential(namedtuple("Credential", "kind id key")):
    """A key this env proves itself with when it dials: kind "cluster" (id None), "submission"
    or "app"."""

    def text(self):
        return principal_text(self.kind, self.id)


class Principal(namedtuple("Principal", "kind id")):
    """What a connection proved at its handshake: "open" (nobody proves anything), "cluster",
    or ("submission" | "app", id)."""

    def text(self):
        return principal_text(self.kind, self.id)


OPEN = Principal("open", None)
CLUSTER = Principal("cluster", None)


def principal_text(kind, ident):
    """cluster, app:app-...: for logs and errors."""
    return kind if ident is None else "%s:%s" % (kind, ident)


def key_text(kind, ident):
    """The key a principal proves: "cluster secret", "app:app-... key"."""
    return "cluster secret" if kind == "cluster" else "%s key" % principal_text(kind, ident)


def hmac_hex(key, text):
    return hmac.new(key.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()


def _bound(text, binding):
    """Over TLS a proof ends with ":" + the server certificate's fingerprint (RFC 5929's
    tls-server-end-point): a proof relayed by a machine in between, which serves a certificate
    of its own, does not match."""
    return text if binding is None else "%s:%s" % (text, binding)


def server_proof(key, nonce, challenge, binding=None):
    return hmac_hex(key, _bound("wick-server:%s:%s" % (nonce, challenge), binding))


def client_proof(key, nonce, challenge, binding=None):
    return hmac_hex(key, _bound("wick-client:%s:%s" % (challenge, nonce), binding))


def derive_key(secret, kind, ident):
    """The key of kind:id under the cluster secret, as 64 hex digits."""
    if kind not in ("submission", "app"):
        raise ValueError("a derived key is a submission's or an app's, not %r" % (kind,))
    return hmac_hex(secret, "wick-%s-key:%s" % (kind, ident))


def cluster_credential(secret):
    return Credential("cluster", None, secret)


def parse_credential(text):
    """WICK_APP_CREDENTIAL's "<submission|app>:<id>:<64 hex digits>" -> Credential."""
    m = _CREDENTIAL.fullmatch(text.strip())
    if not m:
        raise ValueError("%s is not \"<submission|app>:<id>:<64 hex digits>\" (got %d characters); "
                         "it is set by the worker or `wick submit` that started this process"
                         % (APP_CREDENTIAL_ENV, len(text)))
    return Credential(m.group(1), m.group(2), m.group(3))


def handed_credential(environ=None):
    """The credential in WICK_APP_CREDENTIAL, or None when it is unset or empty."""
    text = (os.environ if environ is None else environ).get(APP_CREDENTIAL_ENV)
    return parse_credential(text) if text else None


# ---------------------------------------------------------------------------------------------
# What a listening env accepts: key_for(kind, id) -> the key a peer claiming kind:id must prove,
# or None to refuse it (id is None for "cluster").

def cluster_keys(secret):
    """A holder of the cluster secret accepts every principal: it can derive every key."""

    def key_for(kind, ident):
        if kind == "cluster":
            return secret if ident is None else None
        return None if ident is None else derive_key(secret, kind, ident)

    return key_for


class AppKeys:
    """A driver's: the key of each application it registered, so that only their executors get
    in. Empty until the master's RegisteredApplication names one."""

    def __init__(self):
        self._keys = {}

    def add(self, app_id, key):
        self._keys[app_id] = key

    def remove(self, app_id):
        self._keys.pop(app_id, None)

    def __call__(self, kind, ident):
        return self._keys.get(ident) if kind == "app" and ident is not None else None


# ---------------------------------------------------------------------------------------------
# Finding the cluster secret: the same way every Wick process does (backend/rpc/clusterSecret.ts).

ClusterAuth = namedtuple("ClusterAuth", "mode secret source")  # mode: open, secret or none


def default_secret_file(environ=None):
    env = os.environ if environ is None else environ
    config = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "wick", "cluster-secret")


def find_cluster_secret(conf, environ=None):
    """In order, first found wins: conf wick.authenticate.secret, the file named by conf
    wick.authenticate.secret.file, WICK_AUTH_SECRET, the default secret file. Only an explicit
    wick.authenticate=false runs open; mode "none" means no secret anywhere (source is then the
    default file's path). Raises ValueError naming the value at fault."""
    env = os.environ if environ is None else environ
    authenticate = conf.get("wick.authenticate")
    if authenticate is not None:
        value = authenticate.strip().lower()
        if value not in ("true", "false"):
            raise ValueError("wick.authenticate: expected true or false, got %r" % authenticate)
        if value == "false":
            return ClusterAuth("open", None, "wick.authenticate=false")
    if conf.get("wick.authenticate.secret"):
        return _secret(conf["wick.authenticate.secret"], "wick.authenticate.secret")
    path = conf.get("wick.authenticate.secret.file")
    if path:
        text = _read_secret_file(path)
        if text is None:
            raise ValueError("wick.authenticate.secret.file is %s, which does not exist: create it "
                             "with the secret (the master prints it on first start, or run `wick "
                             "secret` where the master runs)" % path)
        return _secret(text, path)
    if env.get(SECRET_ENV):
        return _secret(env[SECRET_ENV], SECRET_ENV)
    fallback = default_secret_file(env)
    text = _read_secret_file(fallback)
    if text is not None:
        return _secret(text, fallback)
    if authenticate is not None:
        raise ValueError("wick.authenticate is true but no secret is set: set "
                         "wick.authenticate.secret, wick.authenticate.secret.file or the %s "
                         "environment variable" % SECRET_ENV)
    return ClusterAuth("none", None, fallback)


def _secret(text, source):
    value = text.strip()
    if len(value) < MIN_SECRET_LENGTH:
        raise ValueError("The cluster secret from %s has %d characters; it needs at least %d (a "
                         "generated one: `openssl rand -base64 24`)"
                         % (source, len(value), MIN_SECRET_LENGTH))
    if len(value) > MAX_SECRET_LENGTH:
        raise ValueError("The cluster secret from %s is longer than %d characters"
                         % (source, MAX_SECRET_LENGTH))
    return ClusterAuth("secret", value, source)


def _read_secret_file(path):
    """Its first line, stripped; None when there is no such file."""
    try:
        with open(path, encoding="utf-8") as f:
            # A bounded read: a longer first line is refused as too long all the same.
            return f.readline(4 * MAX_SECRET_LENGTH).strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError("Cannot read the cluster secret file %s: %s"
                         % (path, getattr(e, "strerror", None) or e))


def parse_conf(pairs):
    """["wick.x=1", ...] (repeated --conf) -> {"wick.x": "1"}; ValueError naming a bad pair."""
    conf = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError("--conf expects KEY=VALUE, got %r" % pair)
        conf[key.strip()] = value
    return conf


def without_secrets(conf):
    """What an application may be handed of its settings: never how to find the secret."""
    return {k: v for k, v in conf.items() if not k.startswith("wick.authenticate.secret")}


def driver_auth(conf, environ=None):
    """How a driver's env authenticates (backend/app/driver/driverAuth.ts) -> (credential, keys,
    words for the log). Started by `wick submit` or a worker, it holds a submission's key
    (WICK_APP_CREDENTIAL) and never the cluster secret; run by hand, it uses the secret found as
    every Wick process finds it; open when there is none, or wick.authenticate=false. Unless open,
    it lets in only the executors of the applications it registers: `keys` is an empty AppKeys
    until the master's RegisteredApplication names one. Raises ValueError naming what is wrong."""
    handed = handed_credential(environ)
    if handed is not None:
        if handed.kind != "submission":
            raise ValueError("%s holds an application's key (%s), which opens that application "
                             "alone; a driver registers with a submission's key or the cluster "
                             "secret" % (APP_CREDENTIAL_ENV, handed.text()))
        return handed, AppKeys(), "%s key from %s" % (handed.text(), APP_CREDENTIAL_ENV)
    found = find_cluster_secret(conf, environ)
    if found.mode == "open":
        return None, None, "off (wick.authenticate=false)"
    if found.mode == "none":
        return None, None, ("off: no cluster secret in wick.authenticate.secret, "
                            "wick.authenticate.secret.file, %s or %s" % (SECRET_ENV, found.source))
    return cluster_credential(found.secret), AppKeys(), "cluster secret from %s" % found.source
