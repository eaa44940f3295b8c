"""go-plugin AutoMTLS on the plugin side.

The host generates a one-time client certificate and passes its PEM in
PLUGIN_CLIENT_CERT. The plugin answers with a fresh self-signed server certificate
(SAN localhost, CA, server and client auth) in the handshake line, as base64 of the DER
without padding, and requires the host's certificate on every connection.
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class KeyPair:
    cert_pem: bytes
    key_pem: bytes
    cert_der: bytes

    @property
    def handshake_cert(self) -> str:
        """The certificate as it goes in the handshake line: unpadded base64 of DER."""
        return base64.b64encode(self.cert_der).decode("ascii").rstrip("=")


def generate_cert(common_name: str = "localhost", curve: ec.EllipticCurve | None = None) -> KeyPair:
    """A self-signed ECDSA certificate (P-256 unless ``curve`` says otherwise) valid for
    "localhost", usable both as a server and as a client certificate, like go-plugin's
    own generateCert (which uses P-521)."""
    key = ec.generate_private_key(curve or ec.SECP256R1())
    name = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "duplexmpe plugin"),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
    ])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(days=365 * 30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=True,
                data_encipherment=False, key_agreement=True, key_cert_sign=True, crl_sign=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return KeyPair(
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        cert_der=cert.public_bytes(serialization.Encoding.DER),
    )


def check_client_cert(pem: bytes) -> None:
    """Raises ValueError when PLUGIN_CLIENT_CERT is not a PEM certificate."""
    try:
        x509.load_pem_x509_certificate(pem)
    except Exception as e:  # cryptography raises ValueError or its own types
        raise ValueError(f"PLUGIN_CLIENT_CERT is not a PEM certificate: {e}") from None


def server_credentials(server: KeyPair, client_cert_pem: bytes) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials(
        [(server.key_pem, server.cert_pem)],
        root_certificates=client_cert_pem,
        require_client_auth=True,
    )


def cert_from_handshake(field: str) -> bytes:
    """The PEM of the certificate in a handshake line's sixth field (re-padded)."""
    der = base64.b64decode(field + "=" * (-len(field) % 4), validate=True)
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)
