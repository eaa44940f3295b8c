"""The flm-audio adapter on FLM-Audio's real code: the checkout named by
DUPLEXMPE_UPSTREAM_FLM_AUDIO (cofe-ai/flm-audio, e.g. the snapshot of 41d768c), used
exactly as shipped (no file written into it), with a tiny randomly initialised model
built by its own constructors (tiny_flmaudio.py), on CPU torch. Run by
`make test-adapters`; skipped when the variable is unset."""

import inspect
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
if not os.environ.get("DUPLEXMPE_UPSTREAM_FLM_AUDIO"):
    pytest.skip("DUPLEXMPE_UPSTREAM_FLM_AUDIO is not set: point it at a checkout of cofe-ai/flm-audio "
                "(.ci/run points it at the upstream snapshot when the machine has one)", allow_module_level=True)

import flm_audio_adapter as fa  # noqa: E402
import standin_flmaudio  # noqa: E402
import tiny_flmaudio  # noqa: E402

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
UPSTREAM = tiny_flmaudio.checkout()
FACTORY = {"factory": "tiny_flmaudio:load", "device": "cpu", "warmup": False}
# The processes below: dynamo off (LMGen compiles on first use; minutes on a CPU), one
# thread (tiny matrices), offline.
ENV = {"TORCHDYNAMO_DISABLE": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
       "DUPLEXMPE_UPSTREAM_FLM_AUDIO": str(UPSTREAM)}


def speech_frames(n=30, seed=0):
    """Frames with some structure: a vowel-like buzz with a moving pitch, then silence."""
    t = np.arange(n * fa.FRAME_SIZE) / fa.SAMPLE_RATE
    x = 0.3 * np.sin(2 * np.pi * (140 + 40 * np.sin(2 * np.pi * 0.7 * t)) * t) * (t < 0.6 * t[-1])
    x += 0.01 * np.random.default_rng(seed).standard_normal(x.size)
    return list(x.astype(np.float32).reshape(n, fa.FRAME_SIZE))


def test_the_shipped_lmgen_cannot_step_the_shipped_model():
    """The inconsistency the adapter bridges, on upstream's own code: LMGen.depformer_step
    calls forward_audio with two arguments, forward_audio requires four and hands them to
    a DepthGPT.forward that takes two. If this test fails, upstream changed: revisit
    bridge_forward_audio and the README."""
    from flmaudio.models import LMGen

    lm = tiny_flmaudio.build_lm()
    assert list(inspect.signature(lm.forward_audio).parameters) == [
        "transformer_output_states", "audio_input_ids", "step", "kv_cache"]
    assert list(inspect.signature(lm.aud_output_layers.forward).parameters) == ["main_hidden_states", "audio_token_ids"]
    src = inspect.getsource(LMGen.depformer_step)
    assert "transformer_output_states=last_hidden_states" in src and "audio_input_ids=decoded_audio_tokens" in src
    gen = LMGen(lm)
    gen.streaming_forever(1)
    codes = torch.zeros(1, 8, 1, dtype=torch.long)
    with pytest.raises(TypeError, match="step.*kv_cache"):
        gen.step(codes)


@pytest.fixture(scope="module")
def adapter():
    a = fa.FLMAudioAdapter()
    a.configure(FACTORY)
    return a


def converse(adapter, seed, frames):
    conv = adapter.start("c", seed=seed)
    try:
        return [conv.step(f) for f in frames]
    finally:
        conv.close()


def test_the_adapter_steps_the_upstream_model(adapter):
    ident = adapter.identity()
    assert ident["forward_audio"].startswith("bridged:") and "step, kv_cache" in ident["forward_audio"]
    assert ident["library"] == "flmaudio " + fa._git_head(UPSTREAM)
    outs = converse(adapter, 1, speech_frames())
    assert outs[0].samples.size == 0  # LMGen's delay: the first step yields nothing
    assert all(o.samples.shape == (fa.FRAME_SIZE,) and np.isfinite(o.samples).all() for o in outs[1:])
    # The random model says random words: the real tokenizer decodes them, and the wait
    # token (if sampled) ends a segment.
    text = "".join(o.text for o in outs)
    assert text.strip(), "no text token decoded in 30 steps"


def test_reset_and_seed_make_conversations_repeatable(adapter):
    frames = speech_frames()
    first, again, other = converse(adapter, 5, frames), converse(adapter, 5, frames), converse(adapter, 6, frames)
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x.samples, y.samples)
        assert x.text == y.text
    assert [o.text for o in first] != [o.text for o in other] or any(
        not np.array_equal(x.samples, y.samples) for x, y in zip(first, other))


def test_sampling_settings_reach_the_upstream_lmgen():
    a = fa.FLMAudioAdapter()
    a.configure({**FACTORY, "temp_text": 0.4, "top_k_audio": 3, "repetition_penalty_audio": 1.1})
    assert (a.lm_gen.temp_text, a.lm_gen.top_k_audio, a.lm_gen.repetition_penalty_audio) == (0.4, 3, 1.1)
    assert a.lm_gen.top_p_text == 0.9  # upstream's default kept
    assert json.loads(a.identity()["sampling"])["temp_text"] == 0.4


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """The tiny model as a checkpoint directory, with the checkout's modeling code copied
    in for trust_remote_code; written once (about 160 MB: the full-size Mimi)."""
    return tiny_flmaudio.write_checkpoint(tmp_path_factory.mktemp("ckpt") / "FLM-Audio", remote_code=True)


def launch_plugin(tmp_path):
    from duplexmpe_plugin.testing import launch

    env = {**ENV, "HF_HOME": str(tmp_path / "hf")}
    return launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR), timeout=120)


def play(p, frames, seed=2):
    from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2

    def requests():
        yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=seed))
        for i, f in enumerate(frames):
            yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
        yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())

    return [r.frame for r in p.model.Converse(requests(), timeout=600)][1:]


@pytest.mark.parametrize("model_code", ["repository", "checkpoint"])
def test_official_loader_on_the_checkout_as_shipped(tmp_path, checkpoint, model_code):
    """What a lab runs: plugin.py, flmaudio_dir pointing at the checkout (a namespace
    package: no flmaudio/__init__.py), the checkpoint read by flmaudio's own loaders."""
    from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2

    assert not (UPSTREAM / "flmaudio" / "__init__.py").exists()
    with launch_plugin(tmp_path) as p:
        config = {"checkpoint": str(checkpoint), "flmaudio_dir": str(UPSTREAM), "device": "cpu", "dtype": "float32",
                  "model_code": model_code}
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(config)), timeout=600)
        ident = p.plugin.Describe(plugin_pb2.DescribeRequest()).identity
        replies = play(p, speech_frames(3))
        assert p.shutdown() == 0
    assert ident["library"] == "flmaudio " + fa._git_head(UPSTREAM) and ident["revision"] == "local"
    assert ident["flmaudio_code"] == fa.code_digest(UPSTREAM / "flmaudio")
    assert ident["model_code"] == model_code and ident["forward_audio"].startswith("bridged:")
    assert [len(r.pcm) // 4 for r in replies] == [0, 1920, 1920]


def test_a_checkpoint_that_does_not_fill_the_model_is_refused(tmp_path, checkpoint):
    import grpc
    from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2
    from safetensors.torch import load_file, save_file

    broken = tmp_path / "broken"
    broken.mkdir()
    for f in checkpoint.iterdir():
        if f.name != "model.safetensors":
            (broken / f.name).symlink_to(f)
    tensors = load_file(str(checkpoint / "model.safetensors"))
    gone = sorted(k for k in tensors if k.startswith("aud_output_layers."))[0]
    del tensors[gone]
    save_file(tensors, str(broken / "model.safetensors"), metadata={"format": "pt"})
    with launch_plugin(tmp_path) as p:
        with pytest.raises(grpc.RpcError) as e:
            p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(
                {"checkpoint": str(broken), "flmaudio_dir": str(UPSTREAM), "device": "cpu", "dtype": "float32",
                 "warmup": False})), timeout=600)
        p.shutdown()
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "does not match" in e.value.details() and gone in e.value.details()


def params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_the_standin_keeps_upstreams_signatures():
    """plugins/_standins/standin_flmaudio.py, which `make test` runs the adapter against,
    checked against the checkout: LMGen's keyword-only constructor with its defaults and
    step, get_mimi, and the config fields the adapter reads."""
    from flmaudio.models import LMGen, loaders

    real, fake = inspect.signature(LMGen.__init__).parameters, inspect.signature(standin_flmaudio.LMGen.__init__).parameters
    assert [(n, p.kind, p.default) for n, p in fake.items()] == [(n, p.kind, p.default) for n, p in real.items()]
    assert params(standin_flmaudio.LMGen.step) == params(LMGen.step)
    assert params(standin_flmaudio.loaders.get_mimi) == params(loaders.get_mimi)
    lm = tiny_flmaudio.build_lm()
    stand = standin_flmaudio.FLMAudioForCausalLM()
    assert lm.config.aud_channel == stand.config.aud_channel == 8
    assert isinstance(lm.config.mm_token_info.text_wait_token_id, int)
    gen = LMGen(lm)
    assert gen.max_delay == standin_flmaudio.LMGen(stand).max_delay == 1
