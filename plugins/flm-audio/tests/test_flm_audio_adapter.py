"""The flm-audio adapter against the numpy stand-in of flmaudio (plugins/_standins)."""

import numpy as np
import pytest

import flm_audio_adapter as fa
import standin_flmaudio

STANDIN = {"factory": "standin_flmaudio:load", "device": "cpu"}


def adapter(**config):
    a = fa.FLMAudioAdapter()
    a.configure({**STANDIN, **config})
    return a


def speech_then_silence(loud=4, quiet=30):
    t = np.arange(fa.FRAME_SIZE) / fa.SAMPLE_RATE
    tone = (0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    return [tone] * loud + [np.zeros(fa.FRAME_SIZE, np.float32)] * quiet


def run(conv, frames):
    return [conv.step(f) for f in frames]


@pytest.mark.parametrize("config, field", [
    ({"temp": 0.5}, "temp"),  # Moshi's name; FLM-Audio has temp_audio / temp_text
    ({"top_p_text": 1.5}, "top_p_text"),
    ({"top_k_audio": 0}, "top_k_audio"),
    ({"repetition_penalty_text": 0}, "repetition_penalty_text"),
    ({"warmup": "yes"}, "warmup"),
    ({"dtype": "fp8"}, "dtype"),
    ({"flmaudio_dir": "/nonexistent"}, "flmaudio_dir"),
])
def test_bad_config_names_the_field(config, field):
    with pytest.raises(fa.ConfigError, match=field):
        fa.check_config(config)


def test_keyword_only_sampling_reaches_lmgen():
    a = adapter(temp_text=0.3, top_k_audio=5.0)
    assert a.lm_gen.temp_text == 0.3 and a.lm_gen.top_k_audio == 5
    assert a.lm_gen.temp_audio == 0.5  # library default kept
    assert '"temp_text": 0.3' in a.identity()["sampling"]


def test_warmup_then_fresh_state():
    a = adapter(warmup=True)
    conv = a.start("c", seed=1)
    assert a.lm_gen._streaming_state["offset"] == 0  # warmup frames do not leak into the conversation
    outs = run(conv, speech_then_silence(1, 2))
    assert outs[0].samples.size == 0 and outs[1].samples.size == 1920


def test_no_first_frame_mimi_reset_unlike_moshi():
    a = adapter(warmup=False)
    run(a.start("c", seed=1), speech_then_silence(2, 3))
    assert a.runtime["mimi"]._streaming_state["encoded"] == 5


def test_text_segments_end_with_a_newline_on_the_wait_token():
    conv = adapter().start("c", seed=2)
    text = "".join(o.text for o in run(conv, speech_then_silence()))
    assert text.endswith("\n") and text.count("\n") == 1
    assert text.startswith(" w") or text.startswith("w")


def test_text_segment_holds_incomplete_characters():
    class Bytes:
        def decode(self, ids):
            return b"".join(bytes([i]) for i in ids).decode("utf-8", errors="replace")

    seg = fa.TextSegment(Bytes())
    assert seg.put(ord("a")) == "a"
    assert seg.put(0xC3) == ""  # first byte of "é"
    assert seg.put(0xA9) == "\u00e9"
    assert seg.end() == "\n" and seg.put(ord("b")) == "b"


def test_same_seed_same_conversation_and_one_at_a_time():
    a = adapter()
    first = run(a.start("a", seed=9), speech_then_silence())
    a.start_wait_s = 0.05  # the host never overlaps conversations; do not wait long here
    with pytest.raises(RuntimeError, match="one conversation at a time"):
        a.start("b", seed=9)
    a.active.close()
    second = run(a.start("b", seed=9), speech_then_silence())
    assert [o.text for o in first] == [o.text for o in second]
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x.samples, y.samples)


def test_frame_size_and_instruction_are_checked():
    conv = adapter().start("c", seed=1)
    with pytest.raises(ValueError, match="exactly 1920"):
        conv.step(np.zeros(960, np.float32))
    conv.close()
    with pytest.raises(ValueError, match="no text instruction"):
        adapter().start("c", seed=1, instruction="be Aria")


def test_standin_lmgen_wants_exactly_eight_codebooks():
    gen = standin_flmaudio.LMGen(standin_flmaudio.FLMAudioForCausalLM())
    gen.streaming_forever(1)
    with pytest.raises(AssertionError, match="expect 8"):
        gen.step(np.zeros((1, 16, 1), np.int64))


def test_check_config_fuzz_only_raises_config_error():
    """Random values of random types for every field (and unknown fields): the checker
    returns a config or raises ConfigError naming a field, nothing else."""
    rng = np.random.default_rng(1234)
    names = [f.name for f in fa.SCHEMA] + ["bogus"]
    values = [None, True, False, 0, -1, 1.5, float("nan"), float("inf"), 1e300, "", "x", "cuda:0",
              "a:b", [], {}, [1, 2], {"k": "v"}]
    for _ in range(300):
        cfg = {str(rng.choice(names)): values[rng.integers(len(values))] for _ in range(rng.integers(1, 4))}
        try:
            out = fa.check_config(cfg)
        except fa.ConfigError as e:
            assert any(n in str(e) for n in names + ["config"]), str(e)
        else:
            assert set(out) == {f.name for f in fa.SCHEMA}


class _TwoArgDepth:
    """DepthGPT's call shape: forward(main_hidden_states, audio_token_ids)."""

    def forward(self, main_hidden_states, audio_token_ids):
        return ("depth", main_hidden_states, audio_token_ids)

    def __call__(self, *args):
        return self.forward(*args)


class _LM41d768c:
    """The shape of FLMAudioForCausalLM at 41d768c: forward_audio wants four arguments."""
    aud_output_layers = _TwoArgDepth()

    def forward_audio(self, transformer_output_states, audio_input_ids, step, kv_cache):
        raise AssertionError("not to be called")


def test_forward_audio_bridged_to_the_two_argument_depth_call():
    lm = _LM41d768c()
    what = fa.bridge_forward_audio(lm)
    assert what.startswith("bridged:") and "step, kv_cache" in what
    assert lm.forward_audio(transformer_output_states="h", audio_input_ids="a") == ("depth", "h", "a")


def test_forward_audio_that_takes_lmgens_call_is_left_alone():
    class LM:
        aud_output_layers = _TwoArgDepth()

        def forward_audio(self, transformer_output_states, audio_input_ids):
            return "own"

    lm = LM()
    assert fa.bridge_forward_audio(lm) == "as shipped" and lm.forward_audio("h", "a") == "own"


def test_forward_audio_that_cannot_be_bridged_is_refused():
    class LM(_LM41d768c):
        aud_output_layers = type("D", (), {"forward": lambda self, a, b, c: None})()

    with pytest.raises(fa.ConfigError, match="forward_audio requires step, kv_cache"):
        fa.bridge_forward_audio(LM())


def test_weights_left_random_are_refused(tmp_path):
    fa._check_loading_info({"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}, tmp_path)
    with pytest.raises(fa.ConfigError, match="1 missing from the checkpoint .e.g. lm_head.weight"):
        fa._check_loading_info({"missing_keys": ["lm_head.weight"], "unexpected_keys": []}, tmp_path)
    with pytest.raises(fa.ConfigError, match="2 in the checkpoint but not in the model"):
        fa._check_loading_info({"missing_keys": [], "unexpected_keys": ["a", "b"]}, tmp_path)


def test_checkout_commit_and_namespace_package(tmp_path):
    import types

    # A checkout as the snapshot ships it: no .git, an UPSTREAM file, no flmaudio/__init__.py.
    (tmp_path / "flmaudio" / "models").mkdir(parents=True)
    (tmp_path / "flmaudio" / "models" / "__init__.py").write_text("")
    (tmp_path / "UPSTREAM").write_text("cofe-ai/flm-audio 41d768c9f61d954907c1c518709f2d9239de46a8 2025-12-09\n")
    models = types.SimpleNamespace(__file__=str(tmp_path / "flmaudio" / "models" / "__init__.py"))
    assert fa.checkout_of(models) == tmp_path.resolve()
    assert fa._git_head(tmp_path) == "41d768c9f61d954907c1c518709f2d9239de46a8"
    before = fa.code_digest(tmp_path / "flmaudio")
    (tmp_path / "flmaudio" / "models" / "x.py").write_text("x = 1\n")
    assert fa.code_digest(tmp_path / "flmaudio") != before
