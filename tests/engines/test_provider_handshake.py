"""go-plugin's handshake line and automatic mTLS certificate, as its host (client.go, mtls.go)
reads and makes them: pure, no provider process."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from engines.provider.plugin import Handshake, PluginError, client_certificate, parse_handshake

DER = x509.load_pem_x509_certificate(client_certificate().cert_pem).public_bytes(serialization.Encoding.DER)
RAW = base64.b64encode(DER).decode().rstrip("=")  # go's RawStdEncoding: no padding


def test_the_servers_certificate_is_unpadded_base64_der() -> None:
    line = f"1|5|unix|/tmp/plugin123|grpc|{RAW}\n"
    assert parse_handshake(line) == Handshake("unix", "/tmp/plugin123", DER)


@pytest.mark.parametrize(("line", "message"), [
    pytest.param(f"2|5|unix|/s|grpc|{RAW}", "core protocol 2", id="core-protocol"),
    pytest.param(f"1|6|unix|/s|grpc|{RAW}", "plugin protocol 6", id="protocol-6-provider"),
    pytest.param(f"1|5|unix|/s|netrpc|{RAW}", "not grpc", id="net-rpc"),
    pytest.param(f"1|5|tcp|127.0.0.1:1234|grpc|{RAW}", "only unix sockets", id="tcp"),
    pytest.param("1|5|unix|/s|grpc|", "no TLS certificate", id="plaintext-server"),
    pytest.param("1|5|unix|/s|grpc|short-extra-field", "no TLS certificate", id="old-extra-field"),
    pytest.param("This binary is a plugin.", "not a go-plugin handshake", id="no-magic-cookie"),
])
def test_a_handshake_this_host_cannot_use_is_refused(line: str, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        parse_handshake(line)


def test_the_client_certificate_is_what_go_plugin_makes() -> None:
    cert = x509.load_pem_x509_certificate(client_certificate().cert_pem)
    assert cert.subject == cert.issuer  # self-signed
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["localhost"]
    assert set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == {
        ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH}
