"""The moshi adapter against the numpy stand-in of the moshi library (plugins/_standins)."""

import numpy as np
import pytest

import moshi_adapter as ma
import standin_moshi

STANDIN = {"factory": "standin_moshi:load", "device": "cpu"}


def adapter(**config):
    a = ma.MoshiAdapter()
    a.configure({**STANDIN, **config})
    return a


def speech_then_silence(loud_frames=4, quiet_frames=30):
    """Loud 200 Hz tone frames, then silence: the stand-in answers after 3 quiet frames."""
    t = np.arange(ma.FRAME_SIZE) / ma.SAMPLE_RATE
    loud = (0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    quiet = np.zeros(ma.FRAME_SIZE, dtype=np.float32)
    return [loud] * loud_frames + [quiet] * quiet_frames


def run(conv, frames):
    return [conv.step(f) for f in frames]


def test_config_defaults_are_filled_in():
    cfg = ma.check_config({})
    assert cfg["hf_repo"] == "kyutai/moshiko-pytorch-bf16"
    assert cfg["dtype"] == "bfloat16" and cfg["device"] == "cuda"
    assert cfg["temp"] is None and cfg["seed"] == 0


@pytest.mark.parametrize("config, field", [
    ({"tmep": 0.5}, "tmep"),
    ({"dtype": "int8"}, "dtype"),
    ({"temp": "hot"}, "temp"),
    ({"temp": -1.0}, "temp"),
    ({"top_k": 2.5}, "top_k"),
    ({"top_k_text": 0.0}, "top_k_text"),
    ({"device": "gpu0"}, "device"),
    ({"seed": 1.5}, "seed"),
    ({"factory": "no colon"}, "factory"),
    ({"hf_repo": ""}, "hf_repo"),
])
def test_bad_config_names_the_field(config, field):
    with pytest.raises(ma.ConfigError, match=field):
        ma.check_config(config)


def test_factory_that_cannot_be_imported_says_so():
    with pytest.raises(ma.ConfigError, match="cannot import 'no_such_module'"):
        ma.MoshiAdapter().configure({"factory": "no_such_module:load"})


def test_sampling_overrides_reach_lmgen_and_identity():
    a = adapter(temp=0.5, top_k_text=10.0)
    assert a.lm_gen.temp == 0.5 and a.lm_gen.top_k_text == 10
    assert a.lm_gen.temp_text == 0.7 and a.lm_gen.top_k == 250  # library defaults kept
    ident = a.identity()
    assert ident["library"].startswith("standin_moshi")
    assert '"temp": 0.5' in ident["sampling"]


def test_format_and_frame_size():
    conv = adapter().start("c1", seed=1)
    assert (conv.input_rate, conv.output_rate, conv.frame_size) == (24000, 24000, 1920)
    with pytest.raises(ValueError, match="exactly 1920"):
        conv.step(np.zeros(1919, dtype=np.float32))


def test_output_is_one_decoded_frame_per_step_after_the_delay():
    conv = adapter().start("c1", seed=1)
    outs = run(conv, speech_then_silence())
    assert outs[0].samples.size == 0  # LMGen.step returns None while offset <= max_delay
    assert all(o.samples.size == ma.FRAME_SIZE and o.samples.dtype == np.float32 for o in outs[1:])


def test_model_answers_after_speech_then_silence():
    conv = adapter().start("c1", seed=3)
    outs = run(conv, speech_then_silence())
    loud = [i for i, o in enumerate(outs) if np.abs(o.samples).max(initial=0) > 0.01]
    assert loud, "the stand-in should answer after hearing speech"
    assert loud[0] >= 4 + 3  # not before 3 quiet frames followed the speech
    assert any(o.text.startswith(" w") for o in outs)  # text pieces, with the sentencepiece marker replaced
    assert all(o.text == "" for o in outs[:loud[0]])  # pad tokens 0 and 3 are dropped


def test_first_frame_resets_mimi_like_the_server():
    a = adapter()
    conv = a.start("c1", seed=1)
    run(conv, speech_then_silence(2, 3))
    # 5 frames encoded, but the encoder state was reset after the first one.
    assert a.runtime["mimi"]._streaming_state["encoded"] == 4


def test_same_seed_same_output_after_reset():
    a = adapter()
    frames = speech_then_silence()
    first = run(a.start("a", seed=7), frames)
    a.active.close()
    second = run(a.start("b", seed=7), frames)
    a.active.close()
    assert [o.text for o in first] == [o.text for o in second]
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x.samples, y.samples)


def test_another_seed_draws_another_answer():
    a = adapter()
    frames = speech_then_silence()
    first = run(a.start("a", seed=7), frames)
    a.active.close()
    other = run(a.start("b", seed=8), frames)
    assert [o.text for o in first] != [o.text for o in other]


def test_config_seed_shifts_the_conversation_seed():
    frames = speech_then_silence()
    base = run(adapter(seed=1.0).start("a", seed=7), frames)
    same = run(adapter(seed=0.0).start("a", seed=8), frames)
    assert [o.text for o in base] == [o.text for o in same]


def test_one_conversation_at_a_time():
    a = adapter()
    a.start("a", seed=1)
    a.start_wait_s = 0.05  # the host never overlaps conversations; do not wait long here
    with pytest.raises(RuntimeError, match="one conversation at a time"):
        a.start("b", seed=1)
    a.active.close()
    a.start("b", seed=1)


def test_instruction_is_refused():
    with pytest.raises(ValueError, match="no text instruction"):
        adapter().start("a", seed=1, instruction="You are Aria.")


def test_step_after_close_fails():
    conv = adapter().start("a", seed=1)
    conv.close()
    with pytest.raises(RuntimeError, match="closed"):
        conv.step(np.zeros(ma.FRAME_SIZE, dtype=np.float32))


def test_standin_shapes_match_the_real_contract():
    mimi = standin_moshi.loaders.get_mimi(None)
    mimi.streaming_forever(1)
    codes = mimi.encode(np.zeros((1, 1, 3840), dtype=np.float32))
    assert codes.shape == (1, 8, 2) and codes.dtype == np.int64
    assert mimi.decode(codes).shape == (1, 1, 3840)
    with pytest.raises(ValueError, match="multiple of the frame size"):
        mimi.encode(np.zeros((1, 1, 1000), dtype=np.float32))
    gen = standin_moshi.LMGen(standin_moshi.LMModel())
    with pytest.raises(RuntimeError, match="streaming"):
        gen.step(codes[:, :, :1])


def test_check_config_fuzz_only_raises_config_error():
    """Random values of random types for every field (and unknown fields): the checker
    returns a config or raises ConfigError naming a field, nothing else."""
    rng = np.random.default_rng(1234)
    names = [f.name for f in ma.SCHEMA] + ["bogus"]
    values = [None, True, False, 0, -1, 1.5, float("nan"), float("inf"), 1e300, "", "x", "cuda:0",
              "a:b", [], {}, [1, 2], {"k": "v"}]
    for _ in range(300):
        cfg = {str(rng.choice(names)): values[rng.integers(len(values))] for _ in range(rng.integers(1, 4))}
        try:
            out = ma.check_config(cfg)
        except ma.ConfigError as e:
            assert any(n in str(e) for n in names + ["config"]), str(e)
        else:
            assert set(out) == {f.name for f in ma.SCHEMA}


def broken_runtime(config):
    raise RuntimeError("CUDA out of memory")


def test_a_failing_loader_names_what_it_was_loading():
    with pytest.raises(ma.ConfigError, match=r"factory: cannot load factory test_moshi_adapter:broken_runtime: "
                                             r"RuntimeError: CUDA out of memory"):
        ma.MoshiAdapter().configure({"factory": "test_moshi_adapter:broken_runtime"})


def test_configure_again_keeps_the_loaded_model_unless_the_config_changes():
    a = adapter()
    rt = a.runtime
    a.configure({**STANDIN})
    assert a.runtime is rt  # same config: the weights are not loaded twice
    a.configure({**STANDIN, "temp": 0.3})
    assert a.runtime is not rt and a.lm_gen.temp == 0.3
    a.start("c", seed=1)
    with pytest.raises(RuntimeError, match="while conversation 'c' is open"):
        a.configure({**STANDIN, "temp": 0.4})


def test_start_waits_for_the_last_conversation_to_close():
    import threading

    a = adapter()
    first = a.start("a", seed=1)
    threading.Timer(0.2, first.close).start()  # the host's end of "a" arrives a little late
    second = a.start("b", seed=1)
    assert first.closed and a.active is second
