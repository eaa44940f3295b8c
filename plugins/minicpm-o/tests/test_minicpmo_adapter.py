"""The minicpm-o adapter against the numpy stand-in of MiniCPM-o's duplex API (plugins/_standins)."""

import wave

import numpy as np
import pytest

import minicpmo_adapter as ma

STANDIN = {"factory": "standin_minicpmo:load", "device": "cpu"}


@pytest.fixture
def ref_wav(tmp_path):
    path = tmp_path / "ref.wav"
    t = np.arange(8000) / 16000
    pcm = (0.2 * np.sin(2 * np.pi * 300 * t) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(pcm.tobytes())
    return str(path)


def adapter(**config):
    a = ma.MiniCPMOAdapter()
    a.configure({**STANDIN, **config})
    return a


def units(loud=2, quiet=6):
    t = np.arange(ma.FRAME_SIZE) / ma.INPUT_RATE
    speech = (0.4 * np.sin(2 * np.pi * 180 * t)).astype(np.float32)
    return [speech] * loud + [np.zeros(ma.FRAME_SIZE, np.float32)] * quiet


def run(conv, frames):
    return [conv.step(f) for f in frames]


@pytest.mark.parametrize("config, field", [
    ({"temprature": 1.0}, "temprature"),
    ({"top_p": 0.0}, "top_p"),
    ({"top_k": 0}, "top_k"),
    ({"decode_mode": "beam"}, "decode_mode"),
    ({"attn_implementation": "flash"}, "attn_implementation"),
    ({"listen_prob_scale": -1}, "listen_prob_scale"),
    ({"max_new_speak_tokens_per_chunk": 2.5}, "max_new_speak_tokens_per_chunk"),
    ({"system_prompt": 3}, "system_prompt"),
])
def test_bad_config_names_the_field(config, field):
    with pytest.raises(ma.ConfigError, match=field):
        ma.check_config(config)


def write_wav(path, rate, channels, seconds=0.5, freq=300.0):
    t = np.arange(int(seconds * rate)) / rate
    mono = 0.2 * np.sin(2 * np.pi * freq * t)
    pcm = (np.repeat(mono[:, None], channels, axis=1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels), w.setsampwidth(2), w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return str(path)


def test_ref_audio_at_another_rate_is_resampled_like_the_demo(tmp_path):
    """The demo reads the voice with librosa.load(path, sr=16000, mono=True); so do we."""
    librosa = pytest.importorskip("librosa")
    path = write_wav(tmp_path / "stereo44k.wav", 44100, 2)
    a = adapter(ref_audio=path)
    want, _ = librosa.load(path, sr=16000, mono=True)
    assert a.ref_audio.dtype == np.float32 and a.ref_audio.shape == (8000,)
    np.testing.assert_array_equal(a.ref_audio, want)
    a.start("c", seed=1)
    call = a.runtime["duplex"].prepare_calls[-1]
    assert call["ref_audio_len"] == 8000 and call["prompt_wav_path"] == path  # token2wav reads the file itself


def test_ref_audio_errors_name_the_field(tmp_path):
    with pytest.raises(ma.ConfigError, match="ref_audio: cannot read"):
        adapter(ref_audio=str(tmp_path / "missing.wav"))


def test_a_16k_wav_reads_the_same_with_and_without_librosa(ref_wav):
    np.testing.assert_array_equal(ma.read_wav_16k(ref_wav), ma._read_wav_16k_without_librosa(ref_wav, "ref_audio"))


def test_a_missing_default_voice_fails_loudly():
    """No ref_audio and no assets/HT_ref_audio.wav in the checkpoint: the token2wav cache
    would never be set and the model would answer in text only. Configure refuses."""
    with pytest.raises(ma.ConfigError, match=r"ref_audio: empty, and the checkpoint .* has no default voice"):
        adapter(factory="test_minicpmo_adapter:without_default_voice")


def without_default_voice(config):
    import standin_minicpmo

    return {**standin_minicpmo.load(config), "default_ref_audio": ""}


def test_the_default_voice_is_the_checkpoints():
    a = adapter()
    assert a.ref_audio_path.endswith("assets/HT_ref_audio.wav") and a.ref_audio.size == 16000
    a.start("c", seed=1)
    assert a.runtime["duplex"].prepare_calls[-1]["prompt_wav_path"] == a.ref_audio_path


def test_format_is_one_second_units_16k_in_24k_out(ref_wav):
    conv = adapter(ref_audio=ref_wav).start("c", seed=1)
    assert (conv.input_rate, conv.output_rate, conv.frame_size) == (16000, 24000, 16000)
    with pytest.raises(ValueError, match="exactly 16000"):
        conv.step(np.zeros(1600, np.float32))


def test_prepare_gets_the_duplex_template_and_the_voice(ref_wav):
    a = adapter(ref_audio=ref_wav)
    a.start("c", seed=1)
    call = a.runtime["duplex"].prepare_calls[-1]
    assert call["prefix"] == "<|im_start|>system\nStreaming Omni Conversation.\n<|audio_start|>"
    assert call["suffix"] == "<|audio_end|><|im_end|>"
    assert call["ref_audio_len"] == 8000 and call["prompt_wav_path"] == ref_wav


def test_instruction_replaces_the_system_prompt():
    a = adapter()
    conv = a.start("c", seed=1, instruction="You are Aria. stay silent unless asked.")
    assert "You are Aria." in a.runtime["duplex"].prepare_calls[-1]["prefix"]
    assert all(o.samples.size == 0 for o in run(conv, units()))


@pytest.mark.parametrize("force_listen_count, first_spoken", [(0, 2), (3, 3), (5, 5)])
def test_listen_units_play_nothing_and_speak_units_play_24k_audio(force_listen_count, first_spoken):
    conv = adapter(force_listen_count=force_listen_count).start("c", seed=2)
    outs = run(conv, units())
    spoken = [i for i, o in enumerate(outs) if o.samples.size]
    # It answers in the first quiet unit after speech that is not forced to listen.
    assert spoken and spoken[0] == first_spoken
    assert all(outs[i].samples.size == 24000 and outs[i].samples.dtype == np.float32 for i in spoken)
    assert all(outs[i].text.strip() for i in spoken)
    assert all(o.samples.size == 0 and o.text == "" for o in outs[:2])
    assert not any(o.flush for o in outs)


def test_first_unit_is_padded_to_1035_ms_like_the_model_does():
    a = adapter()
    run(a.start("c", seed=1), units(1, 1))
    # The first 1 s is padded at the front to 1035 ms (16560 samples), of which the
    # hop-aligned 16480 are consumed; the second unit consumes 16000: 80 samples wait.
    assert a.runtime["duplex"].audio_buffer.size == 80
    assert a.runtime["duplex"].audio_chunk_idx == 2


def test_force_listen_count_defaults_to_the_demos_and_reaches_the_model():
    assert ma.check_config({})["force_listen_count"] == 3
    a = adapter(force_listen_count=4)
    assert a.runtime["duplex"].force_listen_count == 4 and a.identity()["force_listen_count"] == "4"
    with pytest.raises(ma.ConfigError, match="force_listen_count"):
        ma.check_config({"force_listen_count": -1})


def test_every_unit_is_finalized_when_needs_finalize_is_a_property():
    """The demo's duplex object announces the deferred end of a unit with a property; the
    next prefill refuses to run until finalize_unit() has (standin: as upstream)."""
    import standin_minicpmo

    assert isinstance(vars(standin_minicpmo.Duplex)["needs_finalize"], property)
    a = adapter()
    run(a.start("c", seed=2), units())
    assert a.runtime["duplex"].finalized_units == len(units())
    assert not a.runtime["duplex"].needs_finalize


class MethodDuplex:
    def __init__(self, pending):
        self.pending = pending

    def needs_finalize(self):
        return self.pending


class NoFinalize:
    pass


def test_needs_finalize_as_a_method_or_absent_is_handled_too():
    assert ma.needs_finalize(MethodDuplex(True)) and not ma.needs_finalize(MethodDuplex(False))
    assert not ma.needs_finalize(NoFinalize())


@pytest.mark.parametrize("prompt", [
    "You are Aria.",
    "<|im_start|>system\nYou are Aria.\n<|audio_start|>",
    "<|im_start|>system\nYou are Aria.\n<|audio_start|><|audio_end|><|im_end|>",
])
def test_the_system_prompt_is_wrapped_exactly_once(prompt):
    a = adapter(system_prompt=prompt)
    a.start("c", seed=1)
    call = a.runtime["duplex"].prepare_calls[-1]
    assert call["prefix"] == "<|im_start|>system\nYou are Aria.\n<|audio_start|>"
    assert call["suffix"] == "<|audio_end|><|im_end|>"
    a.active.close()
    a.start("d", seed=1, instruction=prompt)
    assert a.runtime["duplex"].prepare_calls[-1]["prefix"] == call["prefix"]


def test_a_prompt_with_stray_template_markers_is_refused():
    with pytest.raises(ma.ConfigError, match=r"system_prompt: contains <\|im_end\|>"):
        ma.check_config({"system_prompt": "Be brief.<|im_end|>"})
    a = adapter()
    with pytest.raises(ValueError, match=r"instruction: contains <\|audio_start\|>"):
        a.start("c", seed=1, instruction="Hi <|audio_start|>")


def test_same_seed_same_conversation_after_prepare():
    a = adapter()
    first = run(a.start("a", seed=5), units())
    a.active.close()
    second = run(a.start("b", seed=5), units())
    a.active.close()
    assert [o.text for o in first] == [o.text for o in second]
    other = run(a.start("c", seed=6), units())
    assert [o.text for o in first] != [o.text for o in other]


def test_one_conversation_at_a_time():
    a = adapter()
    a.start("a", seed=1)
    a.start_wait_s = 0.05  # the host never overlaps conversations; do not wait long here
    with pytest.raises(RuntimeError, match="one conversation at a time"):
        a.start("b", seed=1)


def test_identity_names_prompt_and_voice(ref_wav):
    ident = adapter(ref_audio=ref_wav).identity()
    assert ident["library"].startswith("standin_minicpmo")
    assert len(ident["prompt_template_sha256"]) == 64 and len(ident["ref_audio_sha256"]) == 64
    assert '"listen_prob_scale": 1.0' in ident["sampling"]


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


def test_read_wav_fuzz_only_raises_config_error(tmp_path):
    """Random bytes, and a real header followed by garbage: ConfigError or audio, never a crash."""
    rng = np.random.default_rng(7)
    header = bytearray(open(_make_wav(tmp_path), "rb").read()[:44])
    for i in range(200):
        blob = bytes(rng.integers(0, 256, rng.integers(0, 200), dtype=np.uint8))
        if i % 2:
            blob = bytes(header) + blob
        path = tmp_path / f"f{i}.wav"
        path.write_bytes(blob)
        try:
            audio = ma.read_wav_16k(str(path))
        except ma.ConfigError:
            continue
        assert audio.dtype == np.float32 and audio.ndim == 1


def _make_wav(tmp_path):
    path = tmp_path / "base.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(b"\0\0" * 10)
    return str(path)
