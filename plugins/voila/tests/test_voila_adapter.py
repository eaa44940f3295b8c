"""The voila adapter's step function against the numpy stand-in of Voila (plugins/_standins)."""

import numpy as np
import pytest

import standin_voila as sv
import voila_adapter as va

STANDIN = {"factory": "standin_voila:load"}


def adapter(**config):
    a = va.VoilaAdapter()
    a.configure({**STANDIN, **config})
    return a


def frames(pattern):
    """'s' = 40 ms of speech, '.' = 40 ms of silence."""
    t = np.arange(va.FRAME_SIZE) / va.INPUT_RATE
    speech = (0.4 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    return [speech if c == "s" else np.zeros(va.FRAME_SIZE, np.float32) for c in pattern]


def run(conv, fs):
    return [conv.step(f) for f in fs]


@pytest.mark.parametrize("config, field", [
    ({"top_k": 0}, "top_k"),
    ({"audio_temperature": -0.1}, "audio_temperature"),
    ({"context_seconds": 60}, "context_seconds"),
    ({"max_steps_per_frame": 0}, "max_steps_per_frame"),
    ({"voila_dir": "/nonexistent"}, "voila_dir"),
    ({"instruction": "x"}, "instruction"),
])
def test_bad_config_names_the_field(config, field):
    with pytest.raises(va.ConfigError, match=field):
        va.check_config(config)


def test_tokenizer_rate_is_checked():
    a = va.VoilaAdapter()
    with pytest.raises(va.ConfigError, match="50 tokens per second"):
        a.configure({"factory": "test_voila_adapter:fast_runtime"})


def fast_runtime(config):
    rt = sv.load(config)

    class Fast(sv.Tokenizer):
        def encode(self, wav, sr):
            return np.zeros((4, 50), np.int64)

    rt["audio_tokenizer"] = Fast()
    return rt


def test_one_token_of_audio_per_frame_while_listening():
    conv = adapter().start("c", seed=1)
    assert (conv.input_rate, conv.output_rate, conv.frame_size) == (16000, 16000, 640)
    outs = run(conv, frames("." * 10))
    assert all(o.samples.shape == (640,) and np.abs(o.samples).max() == 0 for o in outs)


def test_text_steps_consume_no_input_and_the_model_catches_up():
    a = adapter()
    conv = a.start("c", seed=2)
    outs = run(conv, frames("sssss" + "." * 30))
    # The answer's text steps all run within one frame; its first audio row then waits for
    # the next frame's user row, and audio keeps flowing at one row per frame.
    texts = [i for i, o in enumerate(outs) if o.text]
    assert len(texts) == 1 and outs[texts[0]].text.startswith(" t")
    loud = [i for i, o in enumerate(outs) if np.abs(o.samples).max(initial=0) > 0.1]
    assert loud and loud[0] == texts[0] + 1 and all(o.samples.size == 640 for o in outs)
    assert len(a.runtime["runner"].rows) == 35 + 4  # 35 user rows, 3 text rows + eos


def test_close_logs_the_model_steps_per_frame(caplog):
    conv = adapter().start("c", seed=2)
    run(conv, frames("sssss" + "." * 30))
    with caplog.at_level("INFO", logger="voila"):
        conv.close()
        conv.close()
    [entry] = [r for r in caplog.records if r.getMessage() == "conversation closed"]
    # The same conversation as above: 35 audio steps (one user row each), 4 text steps.
    assert (entry.conversation, entry.frames, entry.audio_steps, entry.text_steps) == ("c", 35, 35, 4)
    assert entry.steps_per_frame == round(39 / 35, 3)


def test_frames_encode_with_left_context():
    tok = sv.Tokenizer()
    enc = va.ContextEncoder(tok, 3 * 640)
    t = np.arange(640) / 16000
    rows = [enc.push((a * np.sin(2 * np.pi * 200 * t)).astype(np.float32)) for a in (0.1, 0.2, 0.3, 0.4, 0.0)]
    want = [tok.encode((a * np.sin(2 * np.pi * 200 * t)).astype(np.float32), 16000)[:, 0] for a in (0.1, 0.2, 0.3, 0.4, 0.0)]
    for r, w in zip(rows, want):
        np.testing.assert_array_equal(r, w)
    assert enc.history.size == 3 * 640


def test_decoder_keeps_only_new_samples():
    tok = sv.Tokenizer()
    dec = va.ContextDecoder(tok, 2)
    a = dec.push(np.array([[500], [0], [0], [0]]))
    b = dec.push(np.array([[1000, 0], [0, 0], [0, 0], [0, 0]]))
    assert a.size == 640 and b.size == 1280
    np.testing.assert_allclose(b, tok.decode(np.array([[500, 1000, 0]] + [[0, 0, 0]] * 3))[640:], atol=1e-6)
    assert dec.push(np.zeros((4, 0), np.int64)).size == 0


def test_instruction_reaches_the_prefix_and_each_conversation_starts_fresh():
    a = adapter()
    quiet = run(a.start("a", seed=1, instruction="never speak"), frames("sssss" + "." * 20))
    assert all(np.abs(o.samples).max() == 0 for o in quiet)
    a.active.close()
    talk = run(a.start("b", seed=1), frames("sssss" + "." * 20))
    assert any(o.text for o in talk)
    assert a.runtime["runner"].starts == 2 and len(a.runtime["runner"].rows) == 25 + 4


def test_same_seed_same_conversation_and_one_at_a_time():
    a = adapter()
    first = run(a.start("a", seed=3), frames("sssss" + "." * 25))
    a.start_wait_s = 0.05  # the host never overlaps conversations; do not wait long here
    with pytest.raises(RuntimeError, match="one conversation at a time"):
        a.start("b", seed=3)
    a.active.close()
    second = run(a.start("b", seed=3), frames("sssss" + "." * 25))
    assert [o.text for o in first] == [o.text for o in second]
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x.samples, y.samples)


def test_max_steps_per_frame_bounds_a_frame():
    conv = adapter(max_steps_per_frame=1).start("c", seed=2)
    outs = run(conv, frames("sssss" + "." * 30))
    texts = [i for i, o in enumerate(outs) if o.text]
    # One model step per frame: the marker and the two text tokens take three frames, which
    # play no audio (the backlog of user rows is never caught up).
    assert texts == [9, 10] and outs[8].samples.size == outs[9].samples.size == 0


def test_check_config_fuzz_only_raises_config_error():
    """Random values of random types for every field (and unknown fields): the checker
    returns a config or raises ConfigError naming a field, nothing else."""
    rng = np.random.default_rng(1234)
    names = [f.name for f in va.SCHEMA] + ["bogus"]
    values = [None, True, False, 0, -1, 1.5, float("nan"), float("inf"), 1e300, "", "x", "cuda:0",
              "a:b", [], {}, [1, 2], {"k": "v"}]
    for _ in range(300):
        cfg = {str(rng.choice(names)): values[rng.integers(len(values))] for _ in range(rng.integers(1, 4))}
        try:
            out = va.check_config(cfg)
        except va.ConfigError as e:
            assert any(n in str(e) for n in names + ["config"]), str(e)
        else:
            assert set(out) == {f.name for f in va.SCHEMA}


def runtime_24k(config):
    """The stand-in with a codec that decodes at 24 kHz (960 samples per 40 ms token)."""
    rt = sv.load(config)

    class Codec24k(sv.Tokenizer):
        sampling_rate = 24000

        def decode(self, codes):
            return np.repeat(super().decode(codes), 3)[::2]

    rt["audio_tokenizer"] = Codec24k()
    return rt


def test_output_rate_follows_the_codec():
    conv = adapter(factory="test_voila_adapter:runtime_24k").start("c", seed=2)
    assert (conv.input_rate, conv.output_rate) == (16000, 24000)
    outs = run(conv, frames("sssss" + "." * 12))
    assert all(o.samples.size == 960 for o in outs)  # one 40 ms token at 24 kHz per frame


def test_a_local_checkpoint_directory_is_used_as_is(tmp_path):
    assert va._snapshot(str(tmp_path), "") == (tmp_path, "local")
    assert va._snapshot(str(tmp_path), "v1") == (tmp_path, "v1")
