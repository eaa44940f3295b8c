"""The beep example as a real process, started through run.sh as the host would, over
mutual TLS with a go-plugin style (P-521) client certificate."""

import os

import grpc
import numpy as np
import pytest

from duplexmpe_plugin import testing
from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = [os.path.join(HERE, "run.sh")]
RATE, FRAME = 16000, 1280


@pytest.fixture(scope="module")
def beep():
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


def test_describe(beep):
    d = beep.plugin.Describe(plugin_pb2.DescribeRequest())
    assert (d.name, list(d.kinds)) == ("beep", ["model"])
    assert [f.name for f in d.config_schema] == ["threshold", "tone_hz", "tone_ms"]
    assert all(f.type == "number" and f.default_json for f in d.config_schema)


@pytest.mark.parametrize("config", ['{"threshold": 0}', '{"tone_hz": 9000}', '{"tone_ms": -1}'])
def test_bad_config_is_invalid_argument(beep, config):
    with pytest.raises(grpc.RpcError) as e:
        beep.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=config))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(__import__("json").loads(config))[0] in e.value.details()


def test_silent_without_loud_input(beep):
    beep.plugin.Configure(plugin_pb2.ConfigureRequest(config_json='{"threshold": 0.1}'))
    replies = run(beep, [0.0, 0.05, 0.09, 0.0, 0.0])  # below the threshold throughout
    assert [r.index for r in replies] == [0, 1, 2, 3, 4]
    assert all(r.pcm == b"" and r.text == "" for r in replies)


def test_answers_after_loud_input_with_the_configured_tone(beep):
    beep.plugin.Configure(plugin_pb2.ConfigureRequest(
        config_json='{"threshold": 0.1, "tone_hz": 500, "tone_ms": 320}'))
    replies = run(beep, [0, 0.5, 0.5, 0.5, 0, 0, 0, 0, 0, 0])
    lengths = [len(r.pcm) // 4 for r in replies]
    # Loud on frames 1-3; the tone (320 ms = 4 frames) starts on the first quiet frame.
    assert lengths == [0, 0, 0, 0, FRAME, FRAME, FRAME, FRAME, 0, 0]
    assert [r.text for r in replies][4] == "beep"
    tone = np.concatenate([np.frombuffer(r.pcm, "<f4") for r in replies])
    spectrum = np.abs(np.fft.rfft(tone))
    assert np.fft.rfftfreq(tone.size, 1 / RATE)[spectrum.argmax()] == pytest.approx(500, abs=5)
    assert np.abs(tone).max() == pytest.approx(0.3, abs=0.01)
