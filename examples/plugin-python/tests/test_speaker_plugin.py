"""The speaker example as a real process, started through run.sh as the host would, over
mutual TLS with a go-plugin style (P-521) client certificate. It needs flite."""

import json
import os
import shutil

import grpc
import numpy as np
import pytest

from duplexmpe_plugin import testing
from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = [os.path.join(HERE, "run.sh")]
RATE, FRAME = 16000, 1280

pytestmark = pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed (scripts/install-apt.sh)")


@pytest.fixture(scope="module")
def speaker():
    with testing.launch(RUN) as p:
        yield p
        assert p.shutdown() == 0


def frames(levels):
    yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="t"))
    for i, level in enumerate(levels):
        pcm = np.full(FRAME, level, "<f4").tobytes()
        yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=pcm))
    yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())


def run(p, levels):
    outs = list(p.model.Converse(frames(levels), timeout=30))
    assert outs[0].ready.frame_size == FRAME and outs[0].ready.input_rate == RATE
    return [o.frame for o in outs[1:]]


def configure(p, **config):
    p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(config)))


def test_describe(speaker):
    d = speaker.plugin.Describe(plugin_pb2.DescribeRequest())
    assert (d.name, list(d.kinds)) == ("speaker", ["model"])
    assert [(f.name, f.type) for f in d.config_schema] == [("threshold", "number"), ("pause_ms", "number"), ("answer", "string")]
    assert all(f.default_json for f in d.config_schema)


@pytest.mark.parametrize("config", ['{"threshold": 0}', '{"pause_ms": 1}', '{"answer": " "}'])
def test_bad_config_is_invalid_argument(speaker, config):
    with pytest.raises(grpc.RpcError) as e:
        speaker.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=config))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(json.loads(config))[0] in e.value.details()


def test_silent_without_loud_input(speaker):
    configure(speaker, threshold=0.1)
    replies = run(speaker, [0.0, 0.05, 0.09, 0.0, 0.0])  # below the threshold throughout
    assert [r.index for r in replies] == [0, 1, 2, 3, 4]
    assert all(r.pcm == b"" and r.text == "" for r in replies)


def test_answers_after_a_pause_with_speech(speaker):
    configure(speaker, threshold=0.1, pause_ms=160, answer="The train leaves at seven.")
    replies = run(speaker, [0, 0.5, 0.5, 0.5] + [0] * 60)
    lengths = [len(r.pcm) // 4 for r in replies]
    # Loud on frames 1-3; two quiet frames (160 ms) later, on frame 5, it starts speaking,
    # one frame of audio per frame, until the sentence is said.
    assert lengths[:5] == [0] * 5 and lengths[5] == FRAME and replies[5].text == "answer"
    said = np.concatenate([np.frombuffer(r.pcm, "<f4") for r in replies])
    assert 1.0 < said.size / RATE < 4.0
    assert all(n == FRAME for n in lengths[5:5 + said.size // FRAME])
    # Speech, not a tone: no single frequency carries the energy, and it has pauses.
    spectrum = np.abs(np.fft.rfft(said)) ** 2
    assert spectrum.max() / spectrum.sum() < 0.05
    assert np.sqrt(np.mean(said ** 2)) > 0.02


def test_stops_when_talked_over(speaker):
    configure(speaker, threshold=0.1, pause_ms=80)
    replies = run(speaker, [0.5, 0, 0, 0, 0.5, 0.5])
    assert [len(r.pcm) // 4 for r in replies] == [0, FRAME, FRAME, FRAME, 0, 0]
    assert [r.flush for r in replies] == [False, False, False, False, True, False]
