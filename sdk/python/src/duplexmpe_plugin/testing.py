"""The host's side of the go-plugin handshake, in Python, for testing plugins.

``launch(argv)`` starts a plugin process the way core/pluginhost does: cookie, protocol
versions, a one-time client certificate in PLUGIN_CLIENT_CERT (AutoMTLS; P-521 like
go-plugin's unless told otherwise), then reads the handshake line and opens a
mutual-TLS gRPC channel to the address it names::

    with launch([sys.executable, "plugin.py"]) as p:
        info = p.plugin.Describe(plugin_pb2.DescribeRequest())

``in_process(plugin)`` serves a plugin object in this process over the same mTLS unix
socket, for fast tests of plugin code.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional, Sequence

import grpc
from cryptography.hazmat.primitives.asymmetric import ec

from . import api, handshake, tls
from ._proto.duplexmpe.v1 import model_pb2_grpc, plugin_pb2_grpc, services_pb2_grpc
from ._proto.goplugin import goplugin_pb2, goplugin_pb2_grpc, health_pb2
from .server import GRPC_OPTIONS, PluginServer

# The curve of go-plugin's AutoMTLS client certificate.
GO_PLUGIN_CURVE = ec.SECP521R1()


@dataclass(frozen=True)
class Handshake:
    core_version: int
    protocol_version: int
    network: str
    address: str
    protocol: str
    server_cert: str  # the sixth field as printed: unpadded base64 DER, or ""

    @classmethod
    def parse(cls, line: str) -> "Handshake":
        parts = line.strip().split("|")
        if len(parts) != 6:
            raise ValueError(f"handshake line {line!r} has {len(parts)} fields, want 6")
        return cls(int(parts[0]), int(parts[1]), parts[2], parts[3], parts[4], parts[5])

    def target(self) -> str:
        return f"unix:{self.address}" if self.network == "unix" else self.address


def open_channel(hs: Handshake, client: Optional[tls.KeyPair], timeout: float = 10.0) -> grpc.Channel:
    """Connects as the host does: the server certificate from the handshake is the only
    trusted root, the server name is "localhost", and ``client`` is presented."""
    if client is None:
        channel = grpc.insecure_channel(hs.target(), options=GRPC_OPTIONS)
    else:
        creds = grpc.ssl_channel_credentials(
            root_certificates=tls.cert_from_handshake(hs.server_cert),
            private_key=client.key_pem,
            certificate_chain=client.cert_pem,
        )
        channel = grpc.secure_channel(hs.target(), creds, options=GRPC_OPTIONS + [
            ("grpc.ssl_target_name_override", "localhost"), ("grpc.default_authority", "localhost")])
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        channel.close()
        raise ConnectionError(f"could not connect to the plugin at {hs.target()} within {timeout:.0f} s") from None
    return channel


class Connection:
    """Stubs for every service a plugin may serve, on one channel."""

    def __init__(self, hs: Handshake, channel: grpc.Channel):
        self.handshake = hs
        self.channel = channel
        self.plugin = plugin_pb2_grpc.PluginStub(channel)
        self.model = model_pb2_grpc.ModelStub(channel)
        self.tts = services_pb2_grpc.TTSStub(channel)
        self.asr = services_pb2_grpc.ASRStub(channel)
        self.judge = services_pb2_grpc.JudgeStub(channel)
        self.llm = services_pb2_grpc.LLMStub(channel)
        self.controller = goplugin_pb2_grpc.GRPCControllerStub(channel)
        self.stdio = goplugin_pb2_grpc.GRPCStdioStub(channel)

    def health(self, service: str = "plugin") -> int:
        check = self.channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        return check(health_pb2.HealthCheckRequest(service=service), timeout=10).status


class PluginProcess(Connection):
    """A started plugin process with an open channel."""

    def __init__(self, process: subprocess.Popen, hs: Handshake, channel: grpc.Channel):
        super().__init__(hs, channel)
        self.process = process
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read_stderr(self) -> None:
        fd = self.process.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._stderr_lock:
                self._stderr += chunk

    def shutdown(self, timeout: float = 5.0) -> int:
        """What go-plugin's Kill does: Shutdown, then wait; SIGKILL if it hangs.
        Returns the exit code."""
        try:
            self.controller.Shutdown(goplugin_pb2.Empty(), timeout=timeout)
        except grpc.RpcError:
            pass
        self.channel.close()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def stderr_text(self, wait: bool = False) -> str:
        """Everything the plugin wrote to stderr (its log lines) so far; with wait, up
        to the end of the exited process."""
        if wait:
            self._stderr_reader.join(5)
        with self._stderr_lock:
            return self._stderr.decode(errors="replace")

    def __enter__(self) -> "PluginProcess":
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.channel.close()
        self._stderr_reader.join(5)
        for f in (self.process.stdout, self.process.stderr):
            if f:
                f.close()


def read_handshake(process: subprocess.Popen, timeout: float) -> str:
    """The first line of the process's stdout, within timeout seconds."""
    sel = selectors.DefaultSelector()
    sel.register(process.stdout, selectors.EVENT_READ)
    fd = process.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise TimeoutError(f"no handshake line within {timeout:.0f} s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EOFError(f"plugin closed stdout before the handshake (exit {process.poll()}); got {buf!r}")
            buf += chunk
    finally:
        sel.close()
    return buf.split(b"\n", 1)[0].decode()


def plugin_env(versions: str = "1", client: Optional[tls.KeyPair] = None,
               env: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment the host gives a plugin: this one, plus ``env``, the cookie,
    the protocol versions and (for mTLS) the client certificate."""
    full = dict(os.environ)
    full.update(env or {})
    full[handshake.MAGIC_COOKIE_KEY] = handshake.MAGIC_COOKIE_VALUE
    full[handshake.ENV_PROTOCOL_VERSIONS] = versions
    if client:
        full[handshake.ENV_CLIENT_CERT] = client.cert_pem.decode()
    else:
        full.pop(handshake.ENV_CLIENT_CERT, None)
    return full


def launch(argv: Sequence[str], *, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
           versions: str = "1", mtls: bool = True, client_curve: Optional[ec.EllipticCurve] = None,
           timeout: float = 120.0) -> PluginProcess:
    """Starts a plugin and connects to it. ``env`` is added to the current environment.
    ``timeout`` bounds a hang only: it is generous, so that a loaded machine passes."""
    client = tls.generate_cert(curve=client_curve or GO_PLUGIN_CURVE) if mtls else None
    process = subprocess.Popen(list(argv), env=plugin_env(versions, client, env), cwd=cwd,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        hs = Handshake.parse(read_handshake(process, timeout))
        channel = open_channel(hs, client, timeout)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return PluginProcess(process, hs, channel)


@contextlib.contextmanager
def in_process(plugin: api.Plugin, *, client_curve: Optional[ec.EllipticCurve] = None) -> Iterator[Connection]:
    """Serves ``plugin`` from this process on a mutual-TLS unix socket and yields a
    connection to it; ``connection.server`` is the PluginServer."""
    server = PluginServer(plugin, max_workers=8)
    keys = tls.generate_cert()
    client = tls.generate_cert(curve=client_curve or ec.SECP256R1())
    address = server.listen("unix", keys, client.cert_pem, {})
    server.start({})
    hs = Handshake(handshake.CORE_PROTOCOL_VERSION, handshake.PROTOCOL_VERSION, "unix", address, "grpc",
                   keys.handshake_cert)
    channel = open_channel(hs, client)
    conn = Connection(hs, channel)
    conn.server = server  # type: ignore[attr-defined]
    try:
        yield conn
    finally:
        channel.close()
        server.stop(0)
