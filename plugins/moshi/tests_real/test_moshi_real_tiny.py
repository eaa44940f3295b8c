"""The moshi adapter on the real moshi library (PyPI moshi + CPU torch), with a tiny
randomly initialised model built by the library's own constructors (tiny_moshi.py).
Run by `make test-adapters` in .venv-adapters; not part of `make test`."""

import json
import os
import sys

import numpy as np
import pytest

from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent

torch = pytest.importorskip("torch")
pytest.importorskip("moshi")

import moshi_adapter as ma  # noqa: E402

CONFIG = {"factory": "tiny_moshi:load", "device": "cpu", "dtype": "float32"}
FRAMES = 12


def frames():
    rng = np.random.default_rng(42)
    return [(0.1 * rng.standard_normal(ma.FRAME_SIZE)).astype(np.float32) for _ in range(FRAMES)]


@pytest.fixture(scope="module")
def adapter():
    a = ma.MoshiAdapter()
    a.configure(CONFIG)
    return a


def converse(adapter, seed):
    conv = adapter.start("c", seed=seed)
    try:
        return [conv.step(f) for f in frames()]
    finally:
        conv.close()


def test_frames_in_frames_out(adapter):
    outs = converse(adapter, 1)
    assert outs[0].samples.size == 0  # LMGen's acoustic delay: nothing for the first step
    for o in outs[1:]:
        assert o.samples.shape == (ma.FRAME_SIZE,) and o.samples.dtype == np.float32
        assert np.isfinite(o.samples).all()
    assert adapter.identity()["library"] == "moshi 0.2.13"


def test_reset_and_seed_make_conversations_repeatable(adapter):
    first, second = converse(adapter, 3), converse(adapter, 3)
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x.samples, y.samples)
        assert x.text == y.text
    # A random Mimi decoder maps any codes to nearly the same waveform, so the seed shows
    # in the sampled text tokens.
    other = converse(adapter, 4)
    assert [o.text for o in first] != [o.text for o in other]


def test_through_the_plugin_process(adapter):
    from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
    from duplexmpe_plugin.testing import launch

    env = {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
           "NO_TORCH_COMPILE": "1"}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR), timeout=120) as p:
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(CONFIG)), timeout=120)
        info = p.plugin.Describe(plugin_pb2.DescribeRequest())
        assert info.identity["checkpoint"] == "tiny-random" and info.identity["torch"] == torch.__version__

        def requests():
            yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=3))
            for i, f in enumerate(frames()):
                yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
            yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())

        replies = list(p.model.Converse(requests(), timeout=300))
        assert p.shutdown() == 0
    ready = replies[0].ready
    assert (ready.input_rate, ready.output_rate, ready.frame_size) == (24000, 24000, 1920)
    got = [np.frombuffer(r.frame.pcm, dtype="<f4") for r in replies[1:]]
    assert len(got) == FRAMES and got[0].size == 0
    # Same weights (seeded), same conversation seed: the process says what the library says in-process.
    want = converse(adapter, 3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.samples, atol=1e-6)
    assert [r.frame.text for r in replies[1:]] == [w.text for w in want]
