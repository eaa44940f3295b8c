"""The go-plugin handshake as a host sees it: a real plugin process, its handshake
line, mutual TLS with the certificate it names, version negotiation, the cookie."""

import base64
import json
import os
import signal
import subprocess
import sys

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from duplexmpe_plugin import handshake, testing, tls
from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2
from duplexmpe_plugin._proto.goplugin import health_pb2

FIXTURE = [sys.executable, os.path.join(os.path.dirname(__file__), "fixture_plugin.py")]


def test_negotiate_version_picks_highest_common():
    assert handshake.negotiate_version({"PLUGIN_PROTOCOL_VERSIONS": "1"}) == 1
    assert handshake.negotiate_version({"PLUGIN_PROTOCOL_VERSIONS": "1,2"}) == 1
    assert handshake.negotiate_version({"PLUGIN_PROTOCOL_VERSIONS": "3,1,2"}, supported=(1, 2, 4)) == 2


def test_negotiate_version_without_common_falls_back_to_lowest():
    assert handshake.negotiate_version({"PLUGIN_PROTOCOL_VERSIONS": "5,6"}, supported=(2, 3)) == 2
    assert handshake.negotiate_version({}, supported=(2, 3)) == 2


def test_negotiate_version_warns_on_garbage():
    warnings = []
    v = handshake.negotiate_version({"PLUGIN_PROTOCOL_VERSIONS": "x, 1,"}, warn=warnings.append)
    assert v == 1
    assert len(warnings) == 1 and "'x'" in warnings[0]


def test_handshake_line_format():
    line = handshake.handshake_line(1, "unix", "/tmp/p/plugin.sock", "QUJD")
    assert line == "1|1|unix|/tmp/p/plugin.sock|grpc|QUJD"
    assert handshake.handshake_line(1, "tcp", "127.0.0.1:1234") == "1|1|tcp|127.0.0.1:1234|grpc|"
    with pytest.raises(ValueError, match="padding"):
        handshake.handshake_line(1, "unix", "/x", "QUI=")
    with pytest.raises(ValueError):
        handshake.handshake_line(1, "udp", "/x")
    with pytest.raises(ValueError):
        handshake.handshake_line(1, "unix", "/a|b")


def test_server_cert_is_unpadded_base64_der_for_localhost():
    padded_lengths = 0
    for _ in range(6):
        keys = tls.generate_cert()
        field = keys.handshake_cert
        assert "=" not in field and "\n" not in field
        padded_lengths += len(keys.cert_der) % 3 != 0
        # What Go's base64.RawStdEncoding does: decode without padding.
        der = base64.b64decode(field + "=" * (-len(field) % 4))
        assert der == keys.cert_der
        cert = x509.load_der_x509_certificate(der)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert san.get_values_for_type(x509.DNSName) == ["localhost"]
        assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert ExtendedKeyUsageOID.SERVER_AUTH in eku and ExtendedKeyUsageOID.CLIENT_AUTH in eku
    # ECDSA signatures vary in length, so some certificates need padding in standard
    # base64: the loop above covered the case that breaks the Go host.
    assert padded_lengths > 0


def test_process_handshake_and_mtls_with_go_plugin_certificate():
    # The host's certificate is P-521, as go-plugin's AutoMTLS makes it.
    with testing.launch(FIXTURE, versions="1,2") as p:
        hs = p.handshake
        assert (hs.core_version, hs.protocol_version, hs.network, hs.protocol) == (1, 1, "unix", "grpc")
        assert os.path.exists(hs.address)
        assert len(hs.server_cert) > 50 and "=" not in hs.server_cert
        assert p.health() == health_pb2.HealthCheckResponse.SERVING
        info = p.plugin.Describe(plugin_pb2.DescribeRequest())
        assert info.name == "fixture" and info.protocol_version == 1
        assert p.shutdown() == 0
    assert not os.path.exists(hs.address), "the socket directory is removed on exit"


@pytest.mark.parametrize("curve", [ec.SECP256R1(), ec.SECP521R1()], ids=["p256-grpc-tls", "p521-tls-front"])
def test_mtls_refuses_a_client_without_the_host_certificate(curve):
    with testing.launch(FIXTURE, client_curve=curve) as p:
        assert p.health() == health_pb2.HealthCheckResponse.SERVING
        stranger = tls.generate_cert(curve=curve)
        with pytest.raises(ConnectionError):
            testing.open_channel(p.handshake, stranger, timeout=1)
        with pytest.raises(ConnectionError):
            testing.open_channel(p.handshake, None, timeout=1)
        assert p.shutdown() == 0


def test_version_without_common_answers_ours():
    with testing.launch(FIXTURE, versions="7") as p:
        assert p.handshake.protocol_version == 1  # the host then refuses the plugin
        p.shutdown()


def test_tcp_listener_in_port_range():
    env = {"DUPLEXMPE_PLUGIN_NETWORK": "tcp", "PLUGIN_MIN_PORT": "23100", "PLUGIN_MAX_PORT": "23199"}
    with testing.launch(FIXTURE, env=env) as p:
        host, port = p.handshake.address.split(":")
        assert p.handshake.network == "tcp" and host == "127.0.0.1" and 23100 <= int(port) <= 23199
        assert p.health() == health_pb2.HealthCheckResponse.SERVING
        p.shutdown()


def test_health_of_unknown_service_is_not_found():
    with testing.launch(FIXTURE) as p:
        with pytest.raises(grpc.RpcError) as e:
            p.health("something-else")
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        p.shutdown()


@pytest.mark.parametrize("cookie", [None, "wrong"])
def test_cookie_refusal(cookie):
    env = dict(os.environ)
    env.pop("DUPLEXMPE_PLUGIN", None)
    if cookie:
        env["DUPLEXMPE_PLUGIN"] = cookie
    r = subprocess.run(FIXTURE, env=env, capture_output=True, timeout=30)
    assert r.returncode == 1
    assert r.stdout == b""
    assert b"not a program to run by hand" in r.stderr and b"DUPLEXMPE_PLUGIN" in r.stderr


def test_print_while_loading_does_not_break_the_handshake():
    with testing.launch(FIXTURE, env={"FIXTURE_NOISY": "1"}) as p:
        assert p.handshake.protocol == "grpc"
        p.shutdown()
        assert "loading weights" in p.stderr_text(wait=True)


def test_bad_schema_fails_before_the_handshake():
    proc = subprocess.Popen(FIXTURE, env=testing.plugin_env(env={"FIXTURE_BAD_SCHEMA": "1"}),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert out == b""
    assert b"config field 'speed' has type 'float'" in err


def test_debug_mode_serves_without_host_for_reattach():
    env = dict(os.environ)
    env.pop("DUPLEXMPE_PLUGIN", None)
    env.pop("PLUGIN_CLIENT_CERT", None)
    proc = subprocess.Popen(FIXTURE + ["--debug"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = testing.read_handshake(proc, 30)
        assert line.startswith("DUPLEXMPE_REATTACH=")
        r = json.loads(line[len("DUPLEXMPE_REATTACH="):])
        assert (r["Protocol"], r["ProtocolVersion"], r["Pid"], r["Test"]) == ("grpc", 1, proc.pid, True)
        assert r["Addr"]["Network"] == "unix"
        hs = testing.Handshake(1, 1, "unix", r["Addr"]["String"], "grpc", "")
        conn = testing.Connection(hs, testing.open_channel(hs, None))
        assert conn.plugin.Describe(plugin_pb2.DescribeRequest()).name == "fixture"
        conn.channel.close()
        proc.send_signal(signal.SIGINT)  # Ctrl-C stops a debug-mode plugin
        assert proc.wait(10) == 0
        assert b"serving in debug mode" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_unix_socket_group():
    gid = os.getgid()
    with testing.launch(FIXTURE, env={"PLUGIN_UNIX_SOCKET_GROUP": str(gid)}) as p:
        st = os.stat(p.handshake.address)
        assert st.st_gid == gid and st.st_mode & 0o777 == 0o660
        assert p.health() == health_pb2.HealthCheckResponse.SERVING
        p.shutdown()


def test_socket_directory_is_private():
    with testing.launch(FIXTURE) as p:
        assert os.stat(os.path.dirname(p.handshake.address)).st_mode & 0o777 == 0o700
        p.shutdown()
