"""The freeze-omni plugin as a real plugin process (go-plugin handshake, mTLS, gRPC), with
Freeze-Omni replaced by the numpy stand-in through the `factory` config field."""

import json
from pathlib import Path

import grpc
import numpy as np
import pytest

from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2
from adapter_process import converse, running

PLUGIN_DIR = Path(__file__).resolve().parent.parent
CONFIG = {"factory": "standin_freezeomni:load"}


@pytest.fixture(scope="module")
def plugin():
    yield from running(PLUGIN_DIR)


def chunks(pattern):
    t = np.arange(2560) / 16000
    speech = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    return [speech if c == "s" else np.zeros(2560, np.float32) for c in pattern]


def test_describe_and_bad_config(plugin):
    info = plugin.plugin.Describe(plugin_pb2.DescribeRequest())
    assert info.name == "freeze-omni" and "model.instruction" in info.capabilities
    assert {"model_path", "llm_path", "freeze_omni_dir", "system_role"} <= {f.name for f in info.config_schema}
    assert "Verified against: Freeze-Omni 3e17af4's own code with a tiny random checkpoint on CPU" in info.description
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
