"""The moshi plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with the
moshi library replaced by the numpy stand-in through the `factory` config field."""

import json
from pathlib import Path

import grpc
import numpy as np
import pytest

from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
from adapter_process import converse, running

PLUGIN_DIR = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def plugin():
    yield from running(PLUGIN_DIR)


def frames():
    t = np.arange(1920) / 24000
    loud = (0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    return [loud] * 4 + [np.zeros(1920, np.float32)] * 20


def test_describe_offers_the_schema(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "moshi" and list(info.kinds) == ["model"]
    # What it was verified against, and which tier ran, travel with the plugin.
    assert "Verified against" in info.description and "moshi 0.2.13" in info.description and "GPU smoke not run" in info.description
    fields = {f.name: f for f in info.config_schema}
    assert {"hf_repo", "revision", "device", "dtype", "temp", "seed", "factory"} <= set(fields)
    assert list(fields["dtype"].allowed) == ["bfloat16", "float16", "float32"]
    assert json.loads(fields["hf_repo"].default_json) == "kyutai/moshiko-pytorch-bf16"
    assert "model.instruction" not in info.capabilities


def test_bad_config_is_invalid_argument(plugin):
    with pytest.raises(grpc.RpcError) as e:
        plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps({"dtype": "int4"})))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "dtype" in e.value.details()


def test_conversations_over_grpc(plugin):
    plugin.plugin.Configure(plugin_pb2.ConfigureRequest(
        config_json=json.dumps({"factory": "standin_moshi:load", "device": "cpu"})))
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.identity["library"].startswith("standin_moshi")

    ready, out = converse(plugin, 11, frames())
    assert (ready.input_rate, ready.output_rate, ready.frame_size) == (24000, 24000, 1920)
    assert [f.index for f in out] == list(range(24))
    assert len(out[0].pcm) == 0 and all(len(f.pcm) == 4 * 1920 for f in out[1:])
    assert any(f.text for f in out)

    # A second conversation starts from fresh state: same seed, same reply.
    _, again = converse(plugin, 11, frames())
    assert [(f.pcm, f.text) for f in out] == [(f.pcm, f.text) for f in again]


def test_instruction_is_refused_over_grpc(plugin):
    plugin.plugin.Configure(plugin_pb2.ConfigureRequest(
        config_json=json.dumps({"factory": "standin_moshi:load", "device": "cpu"})))
    def requests():
        yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", instruction="be Aria"))
    with pytest.raises(grpc.RpcError) as e:
        list(plugin.model.Converse(requests(), timeout=30))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "no text instruction" in e.value.details()
