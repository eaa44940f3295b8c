"""The go-plugin handshake: cookie, protocol version, and the line printed on stdout."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

# The go-plugin core protocol version (the handshake line's first field).
CORE_PROTOCOL_VERSION = 1

# The duplexmpe protocol major version (sdk.ProtocolVersion).
PROTOCOL_VERSION = 1

# The cookie the host sets (sdk.MagicCookieKey / sdk.MagicCookieValue).
MAGIC_COOKIE_KEY = "DUPLEXMPE_PLUGIN"
MAGIC_COOKIE_VALUE = "b3c1f0a4e5d2497c9a6e8f7d1c2b3a40"

# Debug mode (sdk.DebugEnv) and the prefix of the line it prints (sdk.ReattachPrefix).
ENV_DEBUG = "DUPLEXMPE_PLUGIN_DEBUG"
REATTACH_PREFIX = "DUPLEXMPE_REATTACH="

ENV_PROTOCOL_VERSIONS = "PLUGIN_PROTOCOL_VERSIONS"
ENV_CLIENT_CERT = "PLUGIN_CLIENT_CERT"
ENV_MIN_PORT = "PLUGIN_MIN_PORT"
ENV_MAX_PORT = "PLUGIN_MAX_PORT"
ENV_UNIX_SOCKET_DIR = "PLUGIN_UNIX_SOCKET_DIR"
ENV_UNIX_SOCKET_GROUP = "PLUGIN_UNIX_SOCKET_GROUP"
ENV_MULTIPLEX_GRPC = "PLUGIN_MULTIPLEX_GRPC"


def cookie_ok(environ: Mapping[str, str]) -> bool:
    return environ.get(MAGIC_COOKIE_KEY) == MAGIC_COOKIE_VALUE


def refusal_message(program: str) -> str:
    """What a plugin prints when started by hand, without the host's cookie."""
    return (
        f"{program}: this is a duplexmpe plugin, not a program to run by hand.\n"
        f"The duplexmpe host starts it and talks to it over gRPC ({MAGIC_COOKIE_KEY} is not set "
        "to the host's cookie).\n"
        "Name it in a plugin block of a run file and run `duplexmpe run <file>`.\n"
    )


def negotiate_version(
    environ: Mapping[str, str],
    supported: Sequence[int] = (PROTOCOL_VERSION,),
    warn: Callable[[str], None] = lambda msg: None,
) -> int:
    """Picks the highest version both the host (PLUGIN_PROTOCOL_VERSIONS, e.g. "1,2")
    and the plugin speak. With no common version it answers the plugin's lowest, as
    go-plugin's server does, and the host then refuses it with a clear error."""
    if not supported:
        raise ValueError("no supported protocol versions")
    ours = sorted(set(int(v) for v in supported))
    offered = environ.get(ENV_PROTOCOL_VERSIONS, "")
    theirs = set()
    for part in offered.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            theirs.add(int(part))
        except ValueError:
            warn(f"host sent an invalid plugin protocol version {part!r} in {ENV_PROTOCOL_VERSIONS}")
    common = [v for v in ours if v in theirs]
    return common[-1] if common else ours[0]


def handshake_line(version: int, network: str, address: str, server_cert: str = "") -> str:
    """``1|<version>|<unix|tcp>|<address>|grpc|<cert>``, where cert is the server's DER
    certificate in unpadded standard base64 (empty without AutoMTLS)."""
    if network not in ("unix", "tcp"):
        raise ValueError(f"network must be unix or tcp, not {network!r}")
    if "|" in address or "\n" in address:
        raise ValueError(f"address {address!r} cannot be put in a handshake line")
    if server_cert.endswith("="):
        raise ValueError("the server certificate must be base64 without padding (Go reads it with RawStdEncoding)")
    return f"{CORE_PROTOCOL_VERSION}|{version}|{network}|{address}|grpc|{server_cert}"
