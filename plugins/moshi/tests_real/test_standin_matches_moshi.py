"""The numpy stand-in (plugins/_standins/standin_moshi.py) keeps the real library's call
signatures: checked here against moshi 0.2.13 itself, so the stand-in tests in
plugins/moshi/tests exercise the adapter against the API it really calls."""

import inspect
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
moshi_models = pytest.importorskip("moshi.models")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_standins"))
import standin_moshi  # noqa: E402


def params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", ["encode", "decode", "set_num_codebooks", "streaming_forever", "reset_streaming"])
def test_mimi_methods(name):
    real = getattr(moshi_models.MimiModel, name)
    fake = getattr(standin_moshi.MimiModel, name)
    assert [p[:2] for p in params(fake)] == [p[:2] for p in params(real)]


def test_lmgen_constructor_and_step():
    real, fake = params(moshi_models.LMGen.__init__), params(standin_moshi.LMGen.__init__)
    assert [p[0] for p in fake] == [p[0] for p in real]
    for (name, _, d_real), (_, _, d_fake) in zip(real, fake):
        if d_real is not inspect.Parameter.empty and not callable(d_real):
            assert d_fake == d_real, name
    assert [p[0] for p in params(standin_moshi.LMGen.step)] == ["self", "input_tokens"]
    assert [p[0] for p in params(moshi_models.LMGen.step)][:2] == ["self", "input_tokens"]


def test_get_mimi():
    real = params(moshi_models.loaders.get_mimi)
    fake = params(standin_moshi.loaders.get_mimi)
    assert [(n, d) for n, _, d in fake] == [(n, d) for n, _, d in real]
