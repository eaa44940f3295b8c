"""The freeze-omni adapter against the numpy stand-in of Freeze-Omni (plugins/_standins)."""

from types import SimpleNamespace

import numpy as np
import pytest

import freeze_omni_adapter as fo

STANDIN = {"factory": "standin_freezeomni:load"}
CHUNK = fo.FRAME_SIZE


def adapter(**config):
    a = fo.FreezeOmniAdapter()
    a.configure({**STANDIN, **config})
    return a


def chunks(pattern):
    """pattern: a string of 's' (speech) and '.' (silence), one 160 ms chunk each."""
    t = np.arange(CHUNK) / fo.INPUT_RATE
    speech = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    return [speech if c == "s" else np.zeros(CHUNK, np.float32) for c in pattern]


def run(conv, frames):
    return [conv.step(f) for f in frames]


@pytest.mark.parametrize("config, field", [
    ({"model_path": ""}, "model_path"),
    ({"model_path": "/nonexistent", "llm_path": "/x"}, "model_path"),
    ({"top_k": 0}, "top_k"),
    ({"top_p": 1.1}, "top_p"),
    ({"system_role": "  "}, "system_role"),
    ({"vad_threshold": 0.5}, "vad_threshold"),
])
def test_bad_config_names_the_field(config, field):
    with pytest.raises(fo.ConfigError, match=field):
        fo.check_config(config)


def test_default_role_is_the_servers_with_its_spacing():
    assert fo.DEFAULT_ROLE.startswith("You are a helpful voice assistant. ")
    assert "Your name is Xiao Yun." in fo.DEFAULT_ROLE and len(fo.DEFAULT_ROLE.split("   ")) > 3


def test_format_and_chunk_size():
    conv = adapter().start("c", seed=1)
    assert (conv.input_rate, conv.output_rate, conv.frame_size) == (16000, 24000, 2560)
    with pytest.raises(ValueError, match="exactly 2560"):
        conv.step(np.zeros(2048, np.float32))


def test_answer_comes_in_one_burst_when_the_state_head_says_start_speaking():
    conv = adapter().start("c", seed=2)
    outs = run(conv, chunks("...sssss" + "." * 10))
    bursts = [i for i, o in enumerate(outs) if o.samples.size]
    assert bursts == [3 + 5 + 3 - 1]  # the third quiet chunk after speech: 'ss', all audio at once
    burst = outs[bursts[0]]
    assert burst.samples.size > 8 * 4800 - 240 and burst.samples.dtype == np.float32
    assert burst.text.strip().startswith("w") and "." in burst.text
    assert not burst.flush  # nothing was queued before


def test_first_segment_leading_silence_is_trimmed():
    conv = adapter().start("c", seed=2)
    out = [o for o in run(conv, chunks("sss" + "." * 6)) if o.samples.size][0]
    first = np.nonzero(np.abs(out.samples) > fo.FIRST_SEGMENT_GATE)[0][0]
    assert first < 20  # the stand-in's 240 leading zeros are gone


def test_barge_in_flushes_the_previous_answer():
    conv = adapter().start("c", seed=3)
    outs = run(conv, chunks("sss...." + "." * 13 + "ssss...."))
    bursts = [o for o in outs if o.samples.size]
    assert len(bursts) == 2
    assert not bursts[0].flush and bursts[1].flush


def test_instruction_sets_the_role_and_reset_restores_it():
    a = adapter()
    quiet = run(a.start("a", seed=1, instruction="You never answer."), chunks("sss" + "." * 6))
    assert all(o.samples.size == 0 for o in quiet)
    a.active.close()
    talk = run(a.start("b", seed=1), chunks("sss" + "." * 6))
    assert any(o.samples.size for o in talk)


def test_same_seed_same_conversation_and_one_at_a_time():
    a = adapter()
    pattern = "..sss...." + "." * 12 + "ss..."
    first = run(a.start("a", seed=4), chunks(pattern))
    a.start_wait_s = 0.05  # the host never overlaps conversations; do not wait long here
    with pytest.raises(RuntimeError, match="one conversation at a time"):
        a.start("b", seed=4)
    a.active.close()
    second = run(a.start("b", seed=4), chunks(pattern))
    assert [o.text for o in first] == [o.text for o in second]
    assert [o.samples.size for o in first] == [o.samples.size for o in second]
    a.active.close()
    other = run(a.start("c", seed=5), chunks(pattern))
    assert [o.text for o in first] != [o.text for o in other]


def test_identity_names_role_and_sampling():
    ident = adapter().identity()
    assert ident["library"].startswith("standin_freezeomni") and len(ident["system_role_sha256"]) == 64
    assert '"top_k": 5' in ident["sampling"]


def test_check_config_fuzz_only_raises_config_error():
    """Random values of random types for every field (and unknown fields): the checker
    returns a config or raises ConfigError naming a field, nothing else."""
    rng = np.random.default_rng(1234)
    names = [f.name for f in fo.SCHEMA] + ["bogus"]
    values = [None, True, False, 0, -1, 1.5, float("nan"), float("inf"), 1e300, "", "x", "cuda:0",
              "a:b", [], {}, [1, 2], {"k": "v"}]
    for _ in range(300):
        cfg = {str(rng.choice(names)): values[rng.integers(len(values))] for _ in range(rng.integers(1, 4))}
        try:
            out = fo.check_config(cfg)
        except fo.ConfigError as e:
            assert any(n in str(e) for n in names + ["config"]), str(e)
        else:
            assert set(out) == {f.name for f in fo.SCHEMA}


def test_revision_is_read_from_a_hugging_face_snapshot_path(tmp_path):
    snap = tmp_path / "models--VITA-MLLM--Freeze-Omni" / "snapshots" / "abc123" / "checkpoints"
    snap.mkdir(parents=True)
    assert fo._snapshot_commit(snap) == "abc123"
    assert fo._snapshot_commit(tmp_path) == ""


def test_a_segment_with_no_text_is_not_voiced():
    """bin/server.py's decoder() embeds the post-processed text's ids; an empty text gives
    torch.tensor([]) (float) and the server's generate thread dies. The bridge skips it."""
    torch = pytest.importorskip("torch")
    bridge = fo.TorchBridge({}, device="cpu")
    pipeline = SimpleNamespace(post_process=lambda t: t, model=SimpleNamespace(tokenizer=SimpleNamespace(encode=lambda t: [])))
    runtime = {"pipeline": pipeline, "tts": None}
    assert bridge.synthesize(runtime, [torch.zeros(1, 1, 896)], "", 0) == []
