"""The freeze-omni plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with
Freeze-Omni replaced by the numpy stand-in through the `factory` config field."""

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
CONFIG = {"factory": "standin_freezeomni:load"}


@pytest.fixture(scope="module")
def plugin():
    env = {"PYTHONPATH": os.pathsep.join([str(STANDINS), os.environ.get("PYTHONPATH", "")])}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR)) as p:
        yield p
        assert p.shutdown() == 0


def chunks(pattern):
    t = np.arange(2560) / 16000
    speech = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    return [speech if c == "s" else np.zeros(2560, np.float32) for c in pattern]


def converse(p, seed, frames):
    def requests():
        yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=seed))
        for i, f in enumerate(frames):
            yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
        yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())
    replies = list(p.model.Converse(requests(), timeout=60))
    return replies[0].ready, [r.frame for r in replies[1:]]


def test_describe_and_bad_config(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "freeze-omni" and "model.instruction" in info.capabilities
    assert {"model_path", "llm_path", "freeze_omni_dir", "system_role"} <= {f.name for f in info.config_schema}
    with pytest.raises(grpc.RpcError) as e:
        plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps({"model_path": "/nowhere"})))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "model_path" in e.value.details()


def test_bursts_and_barge_in_over_grpc(plugin):
    plugin.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(CONFIG)))
    ready, out = converse(plugin, 3, chunks("sss...." + "." * 13 + "ssss...."))
    assert (ready.input_rate, ready.output_rate, ready.frame_size) == (16000, 24000, 2560)
    bursts = [f for f in out if f.pcm]
    assert len(bursts) == 2 and [b.flush for b in bursts] == [False, True]
    assert all(b.text for b in bursts) and len(out) == 28
