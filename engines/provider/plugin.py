"""A Terraform provider binary started and spoken to as terraform does, through hashicorp/go-plugin.

go-plugin's host side (its `client.go`, `mtls.go`, `grpc_client.go`), which terraform runs for each
provider process, is what this module does once per process:

- the child's environment carries the magic cookie terraform's plugins check
  (`TF_PLUGIN_MAGIC_COOKIE`), the protocol versions the host speaks (`PLUGIN_PROTOCOL_VERSIONS=5`)
  and, for automatic mutual TLS, a fresh self-signed certificate of the host's as PEM
  (`PLUGIN_CLIENT_CERT`: ECDSA, CN and DNS name `localhost`, a CA, client and server auth);
- the child answers one line on stdout, `core|app|network|address|protocol|cert`: core protocol 1,
  app protocol 5, `unix` and a socket path, `grpc`, and its own server certificate as DER in
  unpadded standard base64 (go's `RawStdEncoding`);
- the host connects over that socket with TLS, trusting only that certificate, presenting its own,
  expecting the name `localhost` (through `engines.provider.tls_relay`: gRPC's own TLS cannot verify
  the provider's P-521 certificate);
- to stop: the GRPCController service's Shutdown (`plugin.GRPCController/Shutdown`, an empty
  message both ways), then SIGTERM, then SIGKILL, each after a wait.

The provider's own log lines go to its stderr, kept in a temporary file and shown (redacted) only
when the start fails. Nothing here logs the certificate's key.
"""

from __future__ import annotations

import base64
import datetime
import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from engines.provider.tls_relay import TlsRelay, tls_context
from hypergov.redaction import REDACTOR

MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE_VALUE = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
CORE_PROTOCOL = "1"
APP_PROTOCOL = "5"
SHUTDOWN_METHOD = "/plugin.GRPCController/Shutdown"
MAX_MESSAGE = 256 * 1024 * 1024  # the AWS provider's schema alone is tens of MB


class PluginError(RuntimeError):
    """The provider did not start, or did not answer the handshake go-plugin expects."""


@dataclass(frozen=True)
class ClientCertificate:
    cert_pem: bytes
    key_pem: bytes


@dataclass(frozen=True)
class Handshake:
    network: str
    address: str
    server_cert_der: bytes


def client_certificate(*, now: datetime.datetime | None = None) -> ClientCertificate:
    """A self-signed certificate as go-plugin's `generateCert` makes it (P-256 here, not P-521)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "HashiCorp")])
    start = (now or datetime.datetime.now(datetime.UTC)) - datetime.timedelta(seconds=30)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start)
            .not_valid_after(start + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_agreement=True,
                                         key_cert_sign=True, content_commitment=False, data_encipherment=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return ClientCertificate(cert.public_bytes(serialization.Encoding.PEM), key_pem)


def parse_handshake(line: str) -> Handshake:
    """go-plugin's handshake line, checked as its host checks it (pure)."""
    parts = line.strip().split("|")
    if len(parts) < 5:
        raise PluginError(f"not a go-plugin handshake line: {line.strip()[:200]!r}")
    core, app, network, address, protocol = parts[:5]
    if core != CORE_PROTOCOL:
        raise PluginError(f"go-plugin core protocol {core}, this host speaks {CORE_PROTOCOL}")
    if app != APP_PROTOCOL:
        raise PluginError(f"the provider speaks plugin protocol {app}, this client speaks {APP_PROTOCOL}")
    if protocol != "grpc":
        raise PluginError(f"the provider offers {protocol!r}, not grpc")
    if network != "unix":
        raise PluginError(f"the provider listens on {network!r}; only unix sockets are supported")
    cert = parts[5] if len(parts) >= 6 else ""
    if len(cert) <= 50:  # go-plugin ignores shorter "extra" fields of old servers
        raise PluginError("the provider sent no TLS certificate (was PLUGIN_CLIENT_CERT passed?)")
    return Handshake(network, address, base64.b64decode(cert + "=" * (-len(cert) % 4)))


class ProviderProcess:
    """One running provider: its process and a gRPC channel to it. Use as a context manager."""

    def __init__(self, process: subprocess.Popen[bytes], channel: grpc.Channel, relay: TlsRelay, stderr: IO[bytes],
                 socket_dir: tempfile.TemporaryDirectory[str], *, stop_timeout_s: float) -> None:
        self.process, self.channel, self._relay = process, channel, relay
        self._stderr, self._socket_dir = stderr, socket_dir
        self.stop_timeout_s = stop_timeout_s

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    def start(cls, binary: Path, *, environ: Mapping[str, str] | None = None, handshake_timeout_s: float = 60.0,
              stop_timeout_s: float = 10.0) -> ProviderProcess:
        """Start `binary` as a go-plugin server and connect to it (mutual TLS over its socket)."""
        certificate = client_certificate()
        socket_dir = tempfile.TemporaryDirectory(prefix="hypergov-provider-")
        env = {**(os.environ if environ is None else environ), MAGIC_COOKIE_KEY: MAGIC_COOKIE_VALUE,
               "PLUGIN_PROTOCOL_VERSIONS": APP_PROTOCOL, "PLUGIN_CLIENT_CERT": certificate.cert_pem.decode(),
               "PLUGIN_MIN_PORT": "10000", "PLUGIN_MAX_PORT": "25000", "PLUGIN_UNIX_SOCKET_DIR": socket_dir.name}
        stderr = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the process)
        relay: TlsRelay | None = None
        process = subprocess.Popen([str(binary)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
                                   env=env, start_new_session=True)
        try:
            handshake = parse_handshake(_read_line(process, handshake_timeout_s, stderr))
            server_pem = x509.load_der_x509_certificate(handshake.server_cert_der).public_bytes(
                serialization.Encoding.PEM).decode()
            context = tls_context(server_cert_pem=server_pem, client_cert_pem=certificate.cert_pem,
                                  client_key_pem=certificate.key_pem, key_dir=Path(socket_dir.name))
            relay = TlsRelay(listen_path=Path(socket_dir.name) / "grpc.sock", target_path=handshake.address,
                             context=context)
            channel = grpc.insecure_channel(f"unix:{relay.listen_path}", options=[
                ("grpc.default_authority", "localhost"),
                ("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)])
            grpc.channel_ready_future(channel).result(timeout=handshake_timeout_s)
        except BaseException:
            if relay is not None:
                relay.close()
            _stop(process, 0.0)
            stderr.close()
            socket_dir.cleanup()
            raise
        return cls(process, channel, relay, stderr, socket_dir, stop_timeout_s=stop_timeout_s)

    def close(self) -> int | None:
        """Ask the provider to shut down, then signal it if it does not; returns its exit code."""
        try:
            shutdown = self.channel.unary_unary(SHUTDOWN_METHOD, request_serializer=lambda _: b"",
                                                response_deserializer=lambda raw: raw)
            shutdown(None, timeout=self.stop_timeout_s)
        except grpc.RpcError:
            pass  # it may close the connection before answering; the wait below decides
        finally:
            self.channel.close()
            self._relay.close()
        code = _stop(self.process, self.stop_timeout_s)
        self._stderr.close()
        self._socket_dir.cleanup()
        return code

    def __enter__(self) -> ProviderProcess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _read_line(process: subprocess.Popen[bytes], timeout_s: float, stderr: IO[bytes]) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while b"\n" not in buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(timeout=left):
                raise PluginError(f"no handshake from the provider within {timeout_s:.0f} s{_tail(stderr)}")
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                code = process.wait(timeout=5)
                raise PluginError(f"the provider exited ({code}) before its handshake{_tail(stderr)}")
            buffer += chunk
    return buffer.split(b"\n", 1)[0].decode("utf-8", "replace")


def _tail(stderr: IO[bytes]) -> str:
    stderr.seek(0)
    text = stderr.read()[-2000:].decode("utf-8", "replace").strip()
    return f": {REDACTOR.redact(text)}" if text else ""


def _stop(process: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    for send in (None, signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        if send is not None:
            process.send_signal(send)
        try:
            process.wait(timeout=timeout_s if send != signal.SIGKILL else 30)
        except subprocess.TimeoutExpired:
            continue
    if process.stdout is not None:
        process.stdout.close()
    return process.returncode
