"""The provider's mutual TLS, spoken by Python's `ssl` (OpenSSL) on gRPC's behalf.

go-plugin's server certificate is ECDSA on P-521 (`mtls.go`), so the server signs its TLS handshake
with ecdsa_secp521r1_sha512. gRPC's own TLS (BoringSSL) does not offer that algorithm, and the
provider ends every handshake with "handshake failure" (measured: provider 5.100.0, grpcio 1.85).
OpenSSL offers it. So gRPC speaks plaintext HTTP/2 to a socket of ours, in a directory only this
user can open, and one thread per connection relays the bytes through an OpenSSL TLS session to
the provider's socket: the provider's certificate pinned as the only root, ours presented, the name
`localhost`, ALPN h2 (gRPC-Go refuses TLS without it). The plaintext never leaves this process's
own pair of sockets.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import ssl
import threading
from pathlib import Path

_CHUNK = 256 * 1024


def tls_context(*, server_cert_pem: str, client_cert_pem: bytes, client_key_pem: bytes,
                key_dir: Path) -> ssl.SSLContext:
    """A client context trusting only the provider's certificate and presenting ours. `load_cert_chain`
    reads files only: the key is written to `key_dir` (mode 0600, removed at once)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_verify_locations(cadata=server_cert_pem)
    cert_path, key_path = key_dir / "client.pem", key_dir / "client.key"
    try:
        for path, content in ((cert_path, client_cert_pem), (key_path, client_key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(content)
        context.load_cert_chain(cert_path, key_path)
    finally:
        for path in (cert_path, key_path):
            path.unlink(missing_ok=True)
    context.set_alpn_protocols(["h2"])
    return context


class TlsRelay:
    """Listens on `listen_path`; each connection is relayed over TLS to `target_path`."""

    def __init__(self, *, listen_path: Path, target_path: str, context: ssl.SSLContext) -> None:
        self.listen_path, self.target_path, self.context = listen_path, target_path, context
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(listen_path))
        self._listener.listen(8)
        self._closed = threading.Event()
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="provider-tls-accept", daemon=True).start()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                plain, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(plain)
            threading.Thread(target=self._relay, args=(plain,), name="provider-tls-relay", daemon=True).start()

    def _relay(self, plain: socket.socket) -> None:
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with self._lock:
            self._connections.append(raw)
        try:
            raw.connect(self.target_path)
            tls = self.context.wrap_socket(raw, server_hostname="localhost")  # handshake, blocking
            _pump(plain, tls)
        except (OSError, ssl.SSLError):
            pass  # the connection ends; gRPC sees it closed and reports the call's failure
        finally:
            for conn in (plain, raw):
                with contextlib.suppress(OSError):
                    conn.close()


def _pump(plain: socket.socket, tls: ssl.SSLSocket) -> None:
    """Copy bytes both ways until either side closes. One thread drives both directions, so the
    TLS session is never read and written concurrently."""
    tls.setblocking(False)
    with selectors.DefaultSelector() as selector:
        selector.register(plain, selectors.EVENT_READ)
        selector.register(tls, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj is plain:
                    data = plain.recv(_CHUNK)
                    if not data:
                        return
                    _send_all_tls(tls, data)
                else:
                    while True:  # drain what OpenSSL has decrypted, not only what the socket holds
                        try:
                            data = tls.recv(_CHUNK)
                        except ssl.SSLWantReadError:
                            break
                        except ssl.SSLWantWriteError:
                            _wait_writable(tls)
                            continue
                        if not data:
                            return
                        plain.sendall(data)
                        if not tls.pending():
                            break


def _send_all_tls(tls: ssl.SSLSocket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = tls.send(view)
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
            _wait_writable(tls)
            continue
        view = view[sent:]


def _wait_writable(tls: ssl.SSLSocket) -> None:
    with selectors.DefaultSelector() as waiter:
        waiter.register(tls, selectors.EVENT_WRITE)
        waiter.select(1.0)
