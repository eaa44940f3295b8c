"""The voila plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with
Voila replaced by the numpy stand-in through the `factory` config field."""

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
CONFIG = {"factory": "standin_voila:load"}


@pytest.fixture(scope="module")
def plugin():
    env = {"PYTHONPATH": os.pathsep.join([str(STANDINS), os.environ.get("PYTHONPATH", "")])}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR)) as p:
        yield p
        assert p.shutdown() == 0


def frames(pattern):
    t = np.arange(640) / 16000
    speech = (0.4 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    return [speech if c == "s" else np.zeros(640, np.float32) for c in pattern]


def converse(p, seed, frames, instruction=""):
    def requests():
        yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=seed,
                                                                     instruction=instruction))
        for i, f in enumerate(frames):
            yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
        yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())
    replies = list(p.model.Converse(requests(), timeout=60))
    return replies[0].ready, [r.frame for r in replies[1:]]


def test_describe_and_bad_config(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "voila" and "model.instruction" in info.capabilities
    assert {"checkpoint", "audio_tokenizer", "voila_dir", "context_seconds"} <= {f.name for f in info.config_schema}
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
