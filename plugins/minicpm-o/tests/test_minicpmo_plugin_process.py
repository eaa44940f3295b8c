"""The minicpm-o plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with
MiniCPM-o replaced by the numpy stand-in through the `factory` config field."""

import json
from pathlib import Path

import grpc
import numpy as np
import pytest

from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2
from adapter_process import converse, running

PLUGIN_DIR = Path(__file__).resolve().parent.parent
CONFIG = {"factory": "standin_minicpmo:load", "device": "cpu"}


@pytest.fixture(scope="module")
def plugin():
    yield from running(PLUGIN_DIR)


def units():
    t = np.arange(16000) / 16000
    speech = (0.4 * np.sin(2 * np.pi * 180 * t)).astype(np.float32)
    return [speech] * 2 + [np.zeros(16000, np.float32)] * 5


def test_describe_offers_schema_and_instruction(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "minicpm-o" and list(info.kinds) == ["model"]
    assert "model.instruction" in info.capabilities
    assert "Verified against: a stand-in only" in info.description and "MiniCPM-o-Demo 28b60cf" in info.description
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
