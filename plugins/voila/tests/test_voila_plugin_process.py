"""The voila plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with
Voila replaced by the numpy stand-in through the `factory` config field."""

import json
from pathlib import Path

import grpc
import numpy as np
import pytest

from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2
from adapter_process import converse, running

PLUGIN_DIR = Path(__file__).resolve().parent.parent
CONFIG = {"factory": "standin_voila:load"}


@pytest.fixture(scope="module")
def plugin():
    yield from running(PLUGIN_DIR)


def frames(pattern):
    t = np.arange(640) / 16000
    speech = (0.4 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    return [speech if c == "s" else np.zeros(640, np.float32) for c in pattern]


def test_describe_and_bad_config(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "voila" and "model.instruction" in info.capabilities
    assert {"checkpoint", "audio_tokenizer", "voila_dir", "context_seconds", "device", "speaker_model"} <= \
        {f.name for f in info.config_schema}
    assert "Verified against: Voila 6ba63bf's own code with tiny random models on CPU" in info.description
    with pytest.raises(grpc.RpcError) as e:
        plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps({"top_k": -3})))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "top_k" in e.value.details()


def test_conversations_over_grpc(plugin):
    plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(CONFIG)))
    ready, out = converse(plugin, 2, frames("sssss" + "." * 30))
    assert (ready.input_rate, ready.output_rate, ready.frame_size) == (16000, 16000, 640)
    assert all(len(f.pcm) == 4 * 640 for f in out) and sum(bool(f.text) for f in out) == 1
    _, again = converse(plugin, 2, frames("sssss" + "." * 30))
    assert [(f.pcm, f.text) for f in out] == [(f.pcm, f.text) for f in again]
    _, quiet = converse(plugin, 2, frames("sssss" + "." * 30), instruction="never speak")
    assert not any(f.text for f in quiet)
