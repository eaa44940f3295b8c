"""A plugin process's life as the host sees it: stdio streaming, hclog JSON logs,
every kind over real gRPC, and exit on Shutdown, SIGTERM and the host's death."""

import datetime
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import grpc
import numpy as np
import pytest

from duplexmpe_plugin import testing
from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2, services_pb2
from duplexmpe_plugin._proto.goplugin import goplugin_pb2

FIXTURE = [sys.executable, os.path.join(os.path.dirname(__file__), "fixture_plugin.py")]


def log_entries(text):
    entries = []
    for line in text.splitlines():
        entry = json.loads(line)  # every stderr line is a JSON object
        datetime.datetime.strptime(entry["@timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
        assert entry["@level"] in ("trace", "debug", "info", "warn", "error")
        assert isinstance(entry["@message"], str)
        entries.append(entry)
    return entries


def test_stdio_is_streamed_and_logs_are_hclog_json():
    with testing.launch(FIXTURE) as p:
        stream = p.stdio.StreamStdio(goplugin_pb2.Empty())
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json='{"greeting": "hello"}'))
        got = {goplugin_pb2.StdioData.STDOUT: b"", goplugin_pb2.StdioData.STDERR: b""}
        for chunk in stream:
            got[chunk.channel] += chunk.data
            if b"raw fd 1" in got[1] and b"stderr: hello" in got[2]:
                break
        stream.cancel()
        assert b"stdout: hello\n" in got[goplugin_pb2.StdioData.STDOUT]
        assert got[goplugin_pb2.StdioData.STDERR] == b"stderr: hello\n"
        assert p.shutdown() == 0
        entries = log_entries(p.stderr_text(wait=True))
    serving = [e for e in entries if e["@message"] == "plugin serving"]
    assert serving and serving[0]["@level"] == "info" and serving[0]["kinds"] == "tts,asr,judge,llm"
    assert serving[0]["mtls"] is True and serving[0]["protocol_version"] == 1
    assert entries[-1]["@message"] == "plugin stopping: shutdown requested"
    # Nothing printed by the plugin went to the log channel.
    assert not any("hello" in e["@message"] for e in entries)


@pytest.fixture(scope="module")
def shared():
    """One plugin process for the tests that neither stop it nor depend on its state."""
    with testing.launch(FIXTURE) as p:
        yield p
        assert p.shutdown() == 0


def test_every_kind_over_grpc(shared):
    p = shared
    voices = p.tts.ListVoices(services_pb2.ListVoicesRequest()).voices
    assert [(v.id, v.sample_rate) for v in voices] == [("a", 8000)]
    audio = p.tts.Synthesize(services_pb2.SynthesizeRequest(text="four", voice="a")).audio
    assert audio.sample_rate == 8000
    assert np.array_equal(np.frombuffer(audio.pcm, "<f4"), np.full(4, 0.25, np.float32))
    clip = plugin_pb2.Audio(pcm=np.zeros(480, "<f4").tobytes(), sample_rate=16000)
    text = p.asr.Transcribe(services_pb2.TranscribeRequest(audio=clip)).text
    assert text == "480 samples at 16000 Hz"
    v = p.judge.JudgeAnswer(services_pb2.JudgeAnswerRequest(response="Paris"))
    assert (v.label, v.parsed, v.raw) == ("correct", True, "Paris")
    v = p.judge.JudgeAnswer(services_pb2.JudgeAnswerRequest(response="Paris", gold_accepted=["paris", "the capital"]))
    assert v.raw == "Paris | accepted: paris | accepted: the capital"
    v = p.judge.JudgeAnswer(services_pb2.JudgeAnswerRequest(response="13:40", answer_type="duration"))
    assert v.raw == "13:40 | type: duration"
    v = p.judge.ClassifySpeech(services_pb2.ClassifySpeechRequest(transcript="mm-hm"))
    assert (v.label, v.raw) == ("intrusion", "mm-hm")
    c = p.llm.Complete(services_pb2.CompleteRequest(messages=[services_pb2.ChatMessage(role="user", content="hi")]))
    assert (c.content, c.model) == ("HI", "fixture")


def test_sigterm_exits_cleanly():
    with testing.launch(FIXTURE) as p:
        p.process.send_signal(signal.SIGTERM)
        assert p.process.wait(10) == 0
        assert "plugin stopping: shutdown requested" in p.stderr_text(wait=True)


def test_sigint_is_left_to_the_host():
    with testing.launch(FIXTURE) as p:
        p.process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert p.process.poll() is None
        assert p.health() == 1
        assert p.shutdown() == 0


def is_running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_exits_when_the_host_dies():
    # A stand-in host starts the plugin, reads its handshake, reports its pid and dies
    # without stopping it (as a host killed by SIGKILL would).
    host = textwrap.dedent(f"""
        import os, subprocess, sys
        p = subprocess.Popen({FIXTURE!r}, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdout.readline()
        print(p.pid, flush=True)
        os._exit(0)
    """)
    out = subprocess.run([sys.executable, "-c", host], env=testing.plugin_env(), capture_output=True,
                         timeout=30, check=True).stdout
    pid = int(out)
    deadline = time.monotonic() + 10
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = is_running(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "the plugin outlived its host by 10 s"


def test_shutdown_is_not_held_up_by_stuck_plugin_code():
    with testing.launch(FIXTURE) as p:
        stuck = p.tts.Synthesize.future(services_pb2.SynthesizeRequest(text="hang", voice="a"))
        time.sleep(0.3)  # the call is now inside synthesize()
        began = time.monotonic()
        assert p.shutdown(timeout=10) == 0
        # go-plugin waits 2 s before SIGKILL; the plugin left on its own, well before.
        assert time.monotonic() - began < 5
        assert stuck.exception() is not None


def test_garbage_requests_are_errors_not_crashes(shared):
    refused = 0
    p = shared
    for method in ("/duplexmpe.v1.Plugin/Configure", "/duplexmpe.v1.TTS/Synthesize",
                   "/duplexmpe.v1.ASR/Transcribe", "/duplexmpe.v1.LLM/Complete"):
        call = p.channel.unary_unary(method)  # raw bytes, no serializer
        for junk in (b"\xff\xff\xff", b"\x0a\x05ab", bytes(range(256))):
            try:
                call(junk, timeout=10)
            except grpc.RpcError as e:
                assert e.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT), e
                refused += 1
    assert refused >= 8  # undecodable requests are refused; the process keeps serving
    assert p.health() == 1


def test_large_messages_through_the_tls_front(shared):
    # The default client certificate is P-521, so this goes through tlsproxy.
    n = 3_000_000  # 12 MB of float32 each way, three times gRPC's default limit
    p = shared
    clip = plugin_pb2.Audio(pcm=np.zeros(n, "<f4").tobytes(), sample_rate=16000)
    assert p.asr.Transcribe(services_pb2.TranscribeRequest(audio=clip), timeout=60).text == f"{n} samples at 16000 Hz"
    audio = p.tts.Synthesize(services_pb2.SynthesizeRequest(text="x" * n, voice="a"), timeout=60).audio
    assert len(audio.pcm) == 4 * n
