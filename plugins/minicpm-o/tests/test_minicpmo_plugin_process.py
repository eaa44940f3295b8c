"""The minicpm-o plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with
MiniCPM-o replaced by the numpy stand-in through the `factory` config field."""

import json
import os
import sys
from pathlib import Path

import grpc
import numpy as np
import pytest

from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
from duplexmpe_plugin.testing import launch

PLUGIN_DIR = Path(__file__).resolve().parent.parent
STANDINS = PLUGIN_DIR.parent / "_standins"
CONFIG = {"factory": "standin_minicpmo:load", "device": "cpu"}


@pytest.fixture(scope="module")
def plugin():
    env = {"PYTHONPATH": os.pathsep.join([str(STANDINS), os.environ.get("PYTHONPATH", "")])}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR)) as p:
        yield p
        assert p.shutdown() == 0


def converse(p, seed, frames, instruction=""):
    def requests():
        yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=seed,
                                                                     instruction=instruction))
        for i, f in enumerate(frames):
            yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
        yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())
    replies = list(p.model.Converse(requests(), timeout=60))
    return replies[0].ready, [r.frame for r in replies[1:]]


def units():
    t = np.arange(16000) / 16000
    speech = (0.4 * np.sin(2 * np.pi * 180 * t)).astype(np.float32)
    return [speech] * 2 + [np.zeros(16000, np.float32)] * 5


def test_describe_offers_schema_and_instruction(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "minicpm-o" and list(info.kinds) == ["model"]
    assert "model.instruction" in info.capabilities
    fields = {f.name: f for f in info.config_schema}
    assert json.loads(fields["checkpoint"].default_json) == "openbmb/MiniCPM-o-4_5"
    assert list(fields["decode_mode"].allowed) == ["sampling", "greedy"]


def test_bad_config_is_invalid_argument(plugin):
    with pytest.raises(grpc.RpcError) as e:
        plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps({**CONFIG, "top_p": 2.0})))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "top_p" in e.value.details()


def test_conversations_over_grpc(plugin):
    plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(CONFIG)))
    assert plugin.plugin.Describe(plugin_pb2.DescribeRequest()).identity["library"].startswith("standin_minicpmo")
    ready, out = converse(plugin, 5, units())
    assert (ready.input_rate, ready.output_rate, ready.frame_size) == (16000, 24000, 16000)
    sizes = [len(f.pcm) // 4 for f in out]
    assert sizes[:2] == [0, 0] and 24000 in sizes  # listens while it hears speech, then answers
    _, again = converse(plugin, 5, units())
    assert [(f.pcm, f.text) for f in out] == [(f.pcm, f.text) for f in again]
    _, told = converse(plugin, 5, units(), instruction="You are Aria; stay silent.")
    assert all(len(f.pcm) == 0 for f in told)
