"""TLS 1.3 on the wire (docs/protocol.md, "Encryption (TLS 1.3)"), with Python's ssl module.

Which connections are encrypted follows Wick's rule: a connection dialled to an address other
than loopback, and a port bound to one, speak TLS (wick.ssl.enabled, on by default); loopback
stays plain unless wick.ssl.loopback=true. A port that serves TLS tells a TLS peer from a plain
one by the first byte (0x16 opens a TLS handshake) and serves plain only to this machine's
loopback. No CA is involved: a master's certificate is pinned by its fingerprint (wick.ssl.
fingerprint, or WICK_TLS_FINGERPRINT from the worker), and every server's certificate is bound
into the handshake's proofs (wick_handshake.py), so a machine in between is found out.

Python's standard library can load a certificate but cannot make one, so a Python process that
must serve TLS and was given no wick.ssl.certFile/keyFile asks the `openssl` command for a
self-signed one at start (ECDSA P-256, as Wick's own), kept in memory only.

The TLS object is driven over memory buffers (ssl.MemoryBIO) under a lock, rather than as an
SSLSocket: a connection here is read by one thread while others write to it, and OpenSSL does not
allow one TLS connection to be used by two threads at once.
"""

import hashlib
import ipaddress
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading

from wick_errors import AUTHENTICATION_FAILED, CONNECT_FAILED, RpcError

FINGERPRINT_ENV = "WICK_TLS_FINGERPRINT"
SSL_ENABLED_ENV = "WICK_SSL_ENABLED"
SSL_LOOPBACK_ENV = "WICK_SSL_LOOPBACK"
TLS_HANDSHAKE_RECORD = 0x16
FIRST_FRAME_LIMIT = 64 * 1024
_HEX_FORM = re.compile(r"sha256:[0-9a-f]{64}")
_COLON_FORM = re.compile(r"[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){31}")


def fingerprint_of_der(der):
    """sha256:<64 lowercase hex> of a certificate's DER bytes (kubeadm's form)."""
    return "sha256:" + hashlib.sha256(der).hexdigest()


def parse_fingerprints(text, source):
    """Comma-separated fingerprints, in the sha256: form or the colon-separated form browsers
    show, as sha256: strings. Raises ValueError naming `source` and the bad value."""
    out = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if _HEX_FORM.fullmatch(part.lower()):
            out.append(part.lower())
        elif _COLON_FORM.fullmatch(part):
            out.append("sha256:" + part.replace(":", "").lower())
        else:
            raise ValueError("%s: %r is not a certificate fingerprint; expected sha256:<64 hex "
                             "digits> (or the 32 colon-separated pairs browsers show)"
                             % (source, part[:100]))
    return out


def parse_switch(value, source):
    v = value.strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ValueError("%s is %r; expected true or false" % (source, value[:100]))


def is_loopback_host(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def make_self_signed(name):
    """A fresh ECDSA P-256 certificate and key from the openssl command: (cert PEM, key PEM)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("this process must serve TLS 1.3 (wick.ssl.enabled) and Python's "
                           "standard library cannot make a certificate: install the openssl "
                           "command, or give wick.ssl.certFile and wick.ssl.keyFile")
    with tempfile.TemporaryDirectory(prefix="wick-tls-") as d:
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "3650",
                        "-subj", "/CN=%s" % name[:60], "-keyout", key, "-out", cert],
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        with open(cert) as c, open(key) as k:
            return c.read(), k.read()


class WireTls:
    """The wick.ssl settings of one process: what it dials with TLS, what it serves, what it
    pins. from_conf reads the settings as a Wick process does (the conf, else what its driver or
    worker handed it in the environment)."""

    def __init__(self, enabled=True, loopback=False, pins=(), cert_file="", key_file=""):
        self.enabled = enabled
        self.loopback = loopback
        self.pins = list(dict.fromkeys(pins))
        self.cert_file = cert_file
        self.key_file = key_file
        self.masters = set()  # addresses given as master URLs: their certificate is pinned

    @classmethod
    def from_conf(cls, conf, environ=None):
        env = os.environ if environ is None else environ

        def switch(key, env_name, default):
            if key in conf:
                return parse_switch(conf[key], key)
            if env.get(env_name) is not None:
                return parse_switch(env[env_name], env_name)
            return default

        pins = parse_fingerprints(conf.get("wick.ssl.fingerprint", ""), "wick.ssl.fingerprint") \
            + parse_fingerprints(env.get(FINGERPRINT_ENV, ""), FINGERPRINT_ENV)
        cert_file, key_file = conf.get("wick.ssl.certFile", ""), conf.get("wick.ssl.keyFile", "")
        if bool(cert_file) != bool(key_file):
            raise ValueError("wick.ssl.certFile and wick.ssl.keyFile go together: give both or "
                             "neither")
        return cls(switch("wick.ssl.enabled", SSL_ENABLED_ENV, True),
                   switch("wick.ssl.loopback", SSL_LOOPBACK_ENV, False), pins, cert_file, key_file)

    def child_env(self):
        """What an application's command environment carries to its executors: the switches
        that are not their default (as Wick's driver hands them)."""
        env = {}
        if not self.enabled:
            env[SSL_ENABLED_ENV] = "false"
        if self.loopback:
            env[SSL_LOOPBACK_ENV] = "true"
        return env

    def note_master(self, address):
        self.masters.add(address)

    def encrypts(self, host):
        return self.enabled and (self.loopback or not is_loopback_host(host))

    # ---- serving ----

    def server(self, bind_host, name):
        """What a listener on `bind_host` serves: a TlsServer, or None when it serves plain."""
        if not self.encrypts(bind_host):
            return None
        if self.cert_file:
            with open(self.cert_file) as c, open(self.key_file) as k:
                cert_pem, key_pem = c.read(), k.read()
            source = self.cert_file
        else:
            cert_pem, key_pem = make_self_signed("wick %s" % name)
            source = "made at start"
        return TlsServer(cert_pem, key_pem, self.loopback, source)

    # ---- dialling ----

    def dial(self, sock, host, address, timeout):
        """Takes a connected socket to `address` through TLS when the rule says so: returns
        (stream, binding), binding being the server certificate's fingerprint (None: plain).
        Raises RpcError: a pinned master that serves another certificate, or a failed TLS."""
        if not self.encrypts(host):
            return sock, None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False  # pinned or proved by the handshake, not named by a CA
        ctx.verify_mode = ssl.CERT_NONE
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        stream = TlsStream(sock, ctx, False)
        try:
            stream.handshake(timeout)
        except (ssl.SSLError, OSError) as e:
            stream.close()
            raise RpcError(CONNECT_FAILED, "TLS with wick://%s failed (%s): a peer with "
                           "wick.ssl.enabled=false or a version of Wick without TLS answers in "
                           "plaintext; set wick.ssl.enabled the same on both sides"
                           % (address, e)) from e
        got = fingerprint_of_der(stream.peer_certificate())
        if self.pins and address in self.masters and got not in self.pins:
            stream.close()
            raise RpcError(AUTHENTICATION_FAILED, "The master at wick://%s presented the "
                           "certificate %s, but this process pins %s (wick.ssl.fingerprint or %s, "
                           "from the join line). If the master's certificate was replaced, run "
                           "`wick join` on its machine for the new line; if not, something between "
                           "here and the master is answering in its place: do not connect."
                           % (address, got, ", ".join(self.pins), FINGERPRINT_ENV))
        return stream, got


class TlsServer:
    """A listener's TLS front: a certificate, and the rule for plain peers."""

    def __init__(self, cert_pem, key_pem, loopback, source):
        self.fingerprint = fingerprint_of_der(ssl.PEM_cert_to_DER_cert(cert_pem))
        self.source = source
        self.loopback = loopback
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_3
        # load_cert_chain reads files only: the PEM goes through a private file, removed at once.
        with tempfile.TemporaryDirectory(prefix="wick-tls-") as d:
            cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
            for path, text in ((cert, cert_pem), (key, key_pem)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(text)
            self.context.load_cert_chain(cert, key)

    def accept(self, sock, remote_host, own_address, timeout):
        """An accepted socket: (stream, binding) to speak on, or None when it was refused (a
        plain peer from another machine gets one error naming what to do, then the end)."""
        sock.settimeout(timeout)
        try:
            first = sock.recv(1, socket.MSG_PEEK)
            if not first:
                sock.close()
                return None
            if first[0] == TLS_HANDSHAKE_RECORD:
                stream = TlsStream(sock, self.context, True)
                try:
                    stream.handshake(timeout)
                except (ssl.SSLError, OSError):
                    stream.close()
                    return None
                return stream, self.fingerprint
            if not self.loopback and is_loopback_host(remote_host):
                sock.settimeout(None)
                return sock, None
            self._refuse_plain(sock, own_address)
        except OSError:
            sock.close()
        return None

    def _refuse_plain(self, sock, own_address):
        line = b""
        while b"\n" not in line and len(line) < FIRST_FRAME_LIMIT:
            chunk = sock.recv(FIRST_FRAME_LIMIT - len(line))
            if not chunk:
                break
            line += chunk
        rid = None
        try:
            frame = json.loads(line.split(b"\n", 1)[0].decode("utf-8", "replace"))
            if isinstance(frame, dict) and isinstance(frame.get("id"), (int, str)) \
                    and not isinstance(frame.get("id"), bool):
                rid = frame["id"]
        except ValueError:
            pass
        message = ("wick://%s requires TLS 1.3: it listens on an address other than loopback and "
                   "wick.ssl.enabled is on. A Wick peer uses TLS by itself unless it runs with "
                   "wick.ssl.enabled=false (set the same on both sides); a peer of another "
                   "language: docs/protocol.md, \"Encryption\". The certificate to pin: %s"
                   % (own_address, self.fingerprint))
        reply = {"jsonrpc": "2.0", "id": rid,
                 "error": {"code": AUTHENTICATION_FAILED, "message": message}}
        sock.sendall(json.dumps(reply).encode("utf-8") + b"\n")
        sock.shutdown(socket.SHUT_WR)
        timer = threading.Timer(1.0, sock.close)
        timer.daemon = True
        timer.start()


class TlsStream:
    """A TLS connection over a socket with the socket's recv/sendall/shutdown/close, safe for one
    reading thread and any number of writing ones."""

    def __init__(self, sock, context, server_side):
        self.sock = sock
        self._in = ssl.MemoryBIO()
        self._out = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_side=server_side)
        self._lock = threading.Lock()  # the TLS object and its buffers
        self._send_lock = threading.Lock()  # the socket's send side: records leave in order

    def _step(self, fn):
        """Runs fn on the TLS object, then sends what it produced, in the order produced: the
        send lock is taken before the TLS lock is let go."""
        self._lock.acquire()
        try:
            result = fn()
            out = self._out.read()
            if out:
                self._send_lock.acquire()
        finally:
            self._lock.release()
        if out:
            try:
                self.sock.sendall(out)
            finally:
                self._send_lock.release()
        return result

    def _want_read(self, fn):
        """fn's result, or _WANT when the TLS object needs more bytes from the peer."""
        def attempt():
            try:
                return fn()
            except ssl.SSLWantReadError:
                return _WANT
        return self._step(attempt)

    def _feed(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the peer closed the connection")
        with self._lock:
            self._in.write(data)

    def handshake(self, timeout):
        self.sock.settimeout(timeout)
        while self._want_read(self._tls.do_handshake) is _WANT:
            self._feed()
        self.sock.settimeout(None)

    def peer_certificate(self):
        return self._tls.getpeercert(binary_form=True) or b""

    def recv(self, n):
        while True:
            try:
                data = self._want_read(lambda: self._tls.read(n))
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return b""
            if data is not _WANT:
                return data
            raw = self.sock.recv(65536)
            if not raw:
                return b""
            with self._lock:
                self._in.write(raw)

    def sendall(self, data):
        try:
            self._step(lambda: self._tls.write(data))
        except ssl.SSLError as e:
            raise OSError(str(e)) from e

    def shutdown(self, how):
        if how in (socket.SHUT_WR, socket.SHUT_RDWR):
            try:
                self._want_read(self._tls.unwrap)  # close_notify; the peer's comes later
            except (ssl.SSLError, OSError):
                pass
        self.sock.shutdown(how)

    def close(self):
        self.sock.close()

    def settimeout(self, t):
        self.sock.settimeout(t)


_WANT = object()
