"""A TLS front for the plugin's gRPC server, for client certificates that gRPC's
bundled BoringSSL cannot verify.

go-plugin's AutoMTLS gives the host an ECDSA P-521 certificate. The grpcio wheels on
PyPI use BoringSSL, which does not offer the ecdsa_secp521r1_sha512 signature algorithm,
so the Go client finds no acceptable certificate to send and the handshake fails with
PEER_DID_NOT_RETURN_A_CERTIFICATE (grpc/grpc#41089 asks for a knob; there is none).
Python's own ssl module (OpenSSL) verifies P-521 fine. For such certificates the SDK
terminates mutual TLS here, with asyncio in one thread, and pipes the plaintext HTTP/2
bytes to the gRPC server on a unix socket inside the plugin's private (0700) directory.
P-256, P-384 and RSA client certificates skip this and use gRPC's TLS directly.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import tempfile
import threading
from typing import Optional

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from .tls import KeyPair

# What BoringSSL in grpcio verifies by default.
_GRPC_CURVES = ("secp256r1", "secp384r1")


def grpc_can_verify(client_cert_pem: bytes) -> bool:
    key = x509.load_pem_x509_certificate(client_cert_pem).public_key()
    if isinstance(key, ec.EllipticCurvePublicKey):
        return key.curve.name in _GRPC_CURVES
    return isinstance(key, rsa.RSAPublicKey)


class TLSFront:
    """Accepts mutual-TLS connections on ``listen`` (a unix path, or (host, port)) and
    forwards each one to the plaintext unix socket ``inner``."""

    def __init__(self, server: KeyPair, client_cert_pem: bytes, inner: str, private_dir: str):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cadata=client_cert_pem.decode())
        ctx.set_alpn_protocols(["h2"])
        # load_cert_chain reads files: write them into the private directory briefly.
        fd, path = tempfile.mkstemp(dir=private_dir, suffix=".pem")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(server.cert_pem + server.key_pem)
            ctx.load_cert_chain(path)
        finally:
            os.unlink(path)
        self._ctx = ctx
        self._inner = inner
        self._loop = asyncio.new_event_loop()
        self._thread: Optional[threading.Thread] = None
        self._server: Optional[asyncio.base_events.Server] = None

    def start(self, listen) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                if isinstance(listen, str):
                    coro = asyncio.start_unix_server(self._handle, listen, ssl=self._ctx)
                else:
                    coro = asyncio.start_server(self._handle, listen[0], listen[1], ssl=self._ctx)
                self._server = self._loop.run_until_complete(coro)
            except BaseException as e:  # reported to start()'s caller
                failure.append(e)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="duplexmpe-tls-front", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]

    def stop(self) -> None:
        if self._thread is None:
            return

        def close() -> None:
            if self._server is not None:
                self._server.close()
            self._loop.stop()

        self._loop.call_soon_threadsafe(close)
        self._thread.join(2)
        self._thread = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            inner_reader, inner_writer = await asyncio.open_unix_connection(self._inner)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, inner_writer), _pipe(inner_reader, writer))


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await src.read(1 << 16)
            if not data:
                break
            dst.write(data)
            await dst.drain()
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        try:
            dst.close()
        except Exception:
            pass
