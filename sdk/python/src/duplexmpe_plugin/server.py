"""Serving a plugin as a go-plugin process (what the Go SDK's sdk.Serve does)."""

from __future__ import annotations

import grp
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from concurrent import futures
from typing import Mapping, NoReturn, Optional, Sequence

import grpc

from . import api, handshake, logs, stdio, tls, tlsproxy
from ._proto.duplexmpe.v1 import model_pb2_grpc, plugin_pb2_grpc, services_pb2_grpc
from ._proto.goplugin import goplugin_pb2, goplugin_pb2_grpc, health_pb2
from .services import (
    ASRServicer,
    Calls,
    JudgeServicer,
    LLMServicer,
    ModelServicer,
    PluginServicer,
    ProtocolError,
    TTSServicer,
    check_info,
)

log = logging.getLogger("duplexmpe_plugin")

# The gRPC message limit both ways, as on the host (sdk/wire.MaxMessageBytes): several
# minutes of float32 audio fit in one message.
MAX_MESSAGE_BYTES = 256 << 20

GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
]

# go-plugin's Ping checks this service name.
HEALTH_SERVICE = "plugin"

ENV_NETWORK = "DUPLEXMPE_PLUGIN_NETWORK"  # "unix" (default) or "tcp"


class PluginServer:
    """The gRPC server of one plugin process: the duplexmpe services of the kinds the
    plugin implements, plus what go-plugin expects (health, controller, stdio)."""

    def __init__(self, plugin: api.Plugin, *, max_workers: int = 64, pump: Optional[stdio.Pump] = None):
        if not isinstance(plugin, api.Plugin):
            raise TypeError(f"serve() needs a duplexmpe_plugin.Plugin, got {type(plugin).__name__}")
        self.kinds = api.kinds_of(plugin)
        if not self.kinds:
            raise TypeError(f"{type(plugin).__name__} implements no kind: subclass Model, TTS, ASR, Judge or LLM")
        info = plugin.describe()
        check_info(info)
        self.name = info.name
        self.plugin = plugin
        self.pump = pump or stdio.Pump()
        self.shutdown_requested = threading.Event()
        self._stopping = threading.Event()
        self._socket_dir: Optional[str] = None
        self._front: Optional[tlsproxy.TLSFront] = None
        self._front_listen: object = None
        self.address = ""
        self.network = ""

        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="duplexmpe-rpc"),
            options=GRPC_OPTIONS,
        )
        calls = Calls(self.name)
        plugin_pb2_grpc.add_PluginServicer_to_server(PluginServicer(plugin, calls), self.server)
        self.model: Optional[ModelServicer] = None
        if isinstance(plugin, api.Model):
            self.model = ModelServicer(plugin, calls)
            model_pb2_grpc.add_ModelServicer_to_server(self.model, self.server)
        if isinstance(plugin, api.TTS):
            services_pb2_grpc.add_TTSServicer_to_server(TTSServicer(plugin, calls), self.server)
        if isinstance(plugin, api.ASR):
            services_pb2_grpc.add_ASRServicer_to_server(ASRServicer(plugin, calls), self.server)
        if isinstance(plugin, api.Judge):
            services_pb2_grpc.add_JudgeServicer_to_server(JudgeServicer(plugin, calls), self.server)
        if isinstance(plugin, api.LLM):
            services_pb2_grpc.add_LLMServicer_to_server(LLMServicer(plugin, calls), self.server)
        goplugin_pb2_grpc.add_GRPCControllerServicer_to_server(_Controller(self), self.server)
        goplugin_pb2_grpc.add_GRPCStdioServicer_to_server(_Stdio(self), self.server)
        self.server.add_generic_rpc_handlers((_health_handler(),))

    @property
    def uses_tls_front(self) -> bool:
        """Whether mutual TLS is terminated by tlsproxy (a client certificate gRPC's
        BoringSSL cannot verify) rather than by gRPC itself."""
        return self._front is not None

    def listen(self, network: str, keys: Optional[tls.KeyPair] = None, client_cert_pem: bytes = b"",
               environ: Mapping[str, str] = os.environ) -> str:
        """Binds the server (before start) and returns the handshake address: a unix
        socket path in a fresh private directory (under PLUGIN_UNIX_SOCKET_DIR when
        set), or 127.0.0.1:<port> in PLUGIN_MIN_PORT..PLUGIN_MAX_PORT. With ``keys``
        every connection must present ``client_cert_pem`` (mutual TLS)."""
        if network not in ("unix", "tcp"):
            raise ValueError(f"network must be unix or tcp, not {network!r}")
        self._socket_dir = tempfile.mkdtemp(prefix="plugin", dir=environ.get(handshake.ENV_UNIX_SOCKET_DIR) or None)
        if network == "unix":
            path = os.path.join(self._socket_dir, "plugin.sock")
            if len(path.encode()) > 107:
                raise OSError(f"unix socket path {path} is longer than 107 bytes; set a shorter "
                              f"{handshake.ENV_UNIX_SOCKET_DIR} or {ENV_NETWORK}=tcp")
            target, address, listen_on = "unix:" + path, path, path
        else:
            port = _free_port(int(environ.get(handshake.ENV_MIN_PORT) or 10000),
                              int(environ.get(handshake.ENV_MAX_PORT) or 25000))
            target, address, listen_on = f"127.0.0.1:{port}", f"127.0.0.1:{port}", ("127.0.0.1", port)

        if keys is None:
            bound = self.server.add_insecure_port(target)
        elif tlsproxy.grpc_can_verify(client_cert_pem):
            bound = self.server.add_secure_port(target, tls.server_credentials(keys, client_cert_pem))
        else:
            inner = os.path.join(self._socket_dir, "grpc.sock")
            bound = self.server.add_insecure_port("unix:" + inner)
            self._front = tlsproxy.TLSFront(keys, client_cert_pem, inner, self._socket_dir)
            self._front_listen = listen_on
        if not bound:
            raise OSError(f"cannot listen on {target}")
        self.network, self.address = network, address
        return address

    def start(self, environ: Mapping[str, str] = os.environ) -> None:
        self.server.start()
        if self._front is not None:
            self._front.start(self._front_listen)
        group = environ.get(handshake.ENV_UNIX_SOCKET_GROUP)
        if self.network == "unix" and group:
            gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
            os.chown(self.address, -1, gid)
            os.chmod(self.address, 0o660)
            os.chmod(self._socket_dir, 0o750)
            os.chown(self._socket_dir, -1, gid)

    def stop(self, grace: float = 0.2) -> None:
        """Stops serving: ends the stdio stream, cancels calls still running after
        ``grace`` seconds, waits up to a second for open conversations to be closed,
        and removes the socket directory."""
        self._stopping.set()
        self.pump.wake()
        self.server.stop(grace).wait(grace + 1.0)
        if self._front is not None:
            # After the gRPC server, so that the last replies still get out through it.
            self._front.stop()
        deadline = time.monotonic() + 1.0
        while self.model and self.model.open_conversations() and time.monotonic() < deadline:
            time.sleep(0.01)
        if self._socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None


class _Controller(goplugin_pb2_grpc.GRPCControllerServicer):
    def __init__(self, owner: PluginServer):
        self.owner = owner

    def Shutdown(self, request, context):
        log.debug("shutdown requested by the host")
        self.owner.shutdown_requested.set()
        return goplugin_pb2.Empty()


class _Stdio(goplugin_pb2_grpc.GRPCStdioServicer):
    def __init__(self, owner: PluginServer):
        self.owner = owner

    def StreamStdio(self, request, context):
        pump, stopping = self.owner.pump, self.owner._stopping
        while context.is_active() and not stopping.is_set():
            item = pump.get(timeout=0.1)
            if item is not None:
                channel, data = item
                yield goplugin_pb2.StdioData(channel=channel, data=data)


def _health_handler() -> grpc.GenericRpcHandler:
    def check(request, context):
        if request.service in ("", HEALTH_SERVICE):
            return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")

    return grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
        "Check": grpc.unary_unary_rpc_method_handler(
            check,
            request_deserializer=health_pb2.HealthCheckRequest.FromString,
            response_serializer=health_pb2.HealthCheckResponse.SerializeToString,
        ),
    })


def _free_port(lo: int, hi: int) -> int:
    if not 0 < lo <= hi <= 65535:
        raise ValueError(f"bad port range {lo}..{hi} ({handshake.ENV_MIN_PORT}/{handshake.ENV_MAX_PORT})")
    for port in range(lo, hi + 1):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free TCP port in {lo}..{hi}")


def debug_requested(environ: Mapping[str, str] = os.environ, argv: Sequence[str] = ()) -> bool:
    """Debug mode (as the Go SDK): DUPLEXMPE_PLUGIN_DEBUG=1 or a --debug argument."""
    return environ.get(handshake.ENV_DEBUG) == "1" or any(a in ("--debug", "-debug") for a in argv)


def reattach_line(version: int, network: str, address: str, pid: int) -> str:
    """The line a plugin in debug mode prints: a plugin block's reattach setting takes
    the JSON after the prefix (sdk.Reattach in Go)."""
    body = {"Protocol": "grpc", "ProtocolVersion": version, "Pid": pid, "Test": True,
            "Addr": {"Network": network, "String": address}}
    return handshake.REATTACH_PREFIX + json.dumps(body, separators=(",", ":"))


def serve(plugin: api.Plugin, *, versions: Sequence[int] = (handshake.PROTOCOL_VERSION,),
          network: Optional[str] = None, max_workers: int = 64) -> NoReturn:
    """Runs ``plugin`` as a go-plugin process until the host shuts it down, sends
    SIGTERM, or exits; then exits the process. Call it last, from the plugin's main
    script; do not print to stdout before calling it (the host reads the handshake from
    the first line of stdout).

    In debug mode (DUPLEXMPE_PLUGIN_DEBUG=1 or a --debug argument) it serves without a
    host, cookie or TLS and prints ``DUPLEXMPE_REATTACH=<json>`` on stdout: give that
    JSON to a plugin block's reattach setting and hosts connect to this long-lived
    process (a model kept warm on a GPU) instead of starting one. Ctrl-C stops it."""
    environ = os.environ
    # Taken before the handshake: a host may die right after reading it.
    parent = os.getppid()
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "plugin"
    debug = debug_requested(environ, sys.argv[1:])
    if not debug and not handshake.cookie_ok(environ):
        sys.stderr.write(handshake.refusal_message(program))
        sys.stderr.flush()
        sys.exit(1)

    # fd 2 is the host's log channel; keep it for the log handler. Until the handshake
    # line is out, anything written to fd 1 goes to stderr instead, so that plugin code
    # printing while it loads cannot corrupt the handshake.
    sys.stdout.flush()
    handshake_fd = os.dup(1)
    os.dup2(2, 1)
    log_stream = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="backslashreplace")
    logs.setup(log_stream, logs.level_from_env(environ))

    def excepthook(etype, value, tb):
        log.error("uncaught exception", exc_info=(etype, value, tb))

    sys.excepthook = excepthook
    threading.excepthook = lambda a: log.error(
        "uncaught exception in a thread", exc_info=(a.exc_type, a.exc_value, a.exc_traceback),
        extra={"thread": a.thread.name if a.thread else ""})

    if environ.get(handshake.ENV_MULTIPLEX_GRPC, "").lower() in ("1", "true"):
        log.warning("the host asks for go-plugin broker multiplexing (PLUGIN_MULTIPLEX_GRPC), which the Python "
                    "SDK does not support; the host will refuse the plugin: turn GRPCBrokerMultiplex off")
    try:
        server = PluginServer(plugin, max_workers=max_workers)
        version = handshake.negotiate_version(environ, versions, warn=log.warning)
        keys, cert = None, ""
        client_pem = b"" if debug else environ.get(handshake.ENV_CLIENT_CERT, "").encode()
        if client_pem:
            tls.check_client_cert(client_pem)
            keys = tls.generate_cert()
            cert = keys.handshake_cert
        chosen = network or environ.get(ENV_NETWORK) or "unix"
        address = server.listen(chosen, keys, client_pem, environ)
        server.start(environ)
        if debug:
            line = reattach_line(version, server.network, address, os.getpid())
        else:
            line = handshake.handshake_line(version, server.network, address, cert)
    except (ProtocolError, TypeError, ValueError, OSError, KeyError) as e:
        log.error(f"plugin cannot start: {e}", exc_info=not isinstance(e, (ProtocolError, TypeError)))
        _exit(1)
    except Exception:
        log.error("plugin cannot start", exc_info=True)
        _exit(1)

    os.write(handshake_fd, (line + "\n").encode())
    if debug:
        # go-plugin's test mode: stdout stays where it is, and Ctrl-C stops the plugin.
        os.dup2(handshake_fd, 1)
        os.close(handshake_fd)
        signal.signal(signal.SIGINT, lambda signum, frame: server.shutdown_requested.set())
        log_stream.write(f"plugin {server.name!r} is serving in debug mode (pid {os.getpid()}). Hosts reattach "
                         "with the JSON on stdout (a plugin block's reattach setting). Ctrl-C stops it.\n")
    else:
        os.close(handshake_fd)
        # From here on stdout (fd 1, so C code and child processes too) and sys.stderr
        # are streamed to the host over plugin.GRPCStdio; logs keep going to the real
        # stderr.
        stdio.capture_fd(1, server.pump, stdio.STDOUT)
        sys.stderr = stdio.text_writer(server.pump, stdio.STDERR)
        # Ctrl-C in a terminal reaches the whole process group; the host owns it and
        # shuts plugins down itself (go-plugin's Go servers ignore SIGINT too).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    signal.signal(signal.SIGTERM, lambda signum, frame: server.shutdown_requested.set())
    log.info("plugin serving", extra={"plugin": server.name, "kinds": ",".join(server.kinds),
                                      "protocol_version": version, "network": server.network,
                                      "address": address, "mtls": bool(cert),
                                      "tls_front": server.uses_tls_front, "debug": debug})

    reason = "shutdown requested"
    while not server.shutdown_requested.wait(0.25):
        if not debug and os.getppid() != parent:
            reason = f"the host (pid {parent}) is gone"
            break
    log.info(f"plugin stopping: {reason}")
    server.stop()
    _exit(0)


def _exit(code: int) -> NoReturn:
    """Leaves at once: worker threads still inside plugin code must not keep the process
    alive (the host waits 2 s, then sends SIGKILL)."""
    for h in logging.getLogger().handlers:
        try:
            h.flush()
        except Exception:
            pass
    try:
        sys.stdout.flush()
    except Exception:
        pass
    os._exit(code)
