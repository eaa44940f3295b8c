"""The adapter's step function against Voila's own loop, token for token, on a tiny
random VoilaAutonomousModel (tiny_voila.py) built and loaded by Voila's code.

The adapter plays 40 ms frames of a shipped flite clip; then the same model, reseeded,
runs `VoilaAutonomousModel.run_generate` on the prefix `tokenize_func.voila_input_format`
builds (as infer.py eval_model does), pulling the same user audio rows from its
input_generator. Both sequences, user and model channels, must be equal token for token,
and what the adapter emitted (text ids, audio codes) must be what infer.py reads out of
run_generate's output. The user rows are the adapter's own (each frame encoded with 1 s
of context; infer.py encodes the whole file at once): that deviation is in the codec, not
in the loop, and is documented in README.md.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import shipped

torch = pytest.importorskip("torch")


class Recording:
    """Wraps the adapter's text tokenizer and decoder to record what it emitted."""

    def __init__(self, conv):
        self.text_ids, self.codes = [], []
        tok, decoder = conv.text_tokenizer, conv.decoder
        push = decoder.push

        def decode(ids, **kw):
            self.text_ids.extend(ids)
            return tok.decode(ids, **kw)

        def record(codes):
            self.codes.extend(codes.T.tolist())
            return push(codes)

        conv.text_tokenizer = SimpleNamespace(decode=decode)
        decoder.push = record


def infer_py_readout(outputs, prefix_len, tokenizer, tf, num_codebooks, codebook_size):
    """infer.py eval_model's reading of run_generate's output (its lines after run_generate)."""
    audio_min = tokenizer.convert_tokens_to_ids(tf.AUDIO_TOKEN_FORMAT.format(0))
    audio_max = tokenizer.convert_tokens_to_ids(tf.AUDIO_TOKEN_FORMAT.format(codebook_size * num_codebooks - 1))
    outputs = outputs.chunk(2, dim=2)[1][0].cpu().tolist()
    text, audio = [], []
    for item in outputs[prefix_len:]:
        if audio_min <= item[0] <= audio_max:
            audio.append([(at - audio_min) % codebook_size for at in item])
        elif item[0] != tokenizer.eos_token_id:
            text.append(item[0])
    return text, audio


@pytest.mark.parametrize("seed, instruction", [(7, ""), (11, "You are Aria.")])
def test_the_step_function_is_run_generate(tiny, seed, instruction):
    import voila_adapter as va
    import tokenize_func as tf

    a = va.VoilaAdapter()
    a.configure({**tiny, "max_steps_per_frame": 256})
    audio, rate = shipped.speech(range(2))
    assert rate == va.INPUT_RATE
    audio = np.concatenate([audio, np.zeros(-len(audio) % va.FRAME_SIZE, np.float32)])
    conv = a.start("c", seed=seed, instruction=instruction)
    runner, rec = conv.runner, Recording(conv)
    prefix_len = runner.input_ids.shape[1]
    for frame in audio.reshape(-1, va.FRAME_SIZE):
        conv.step(frame)
    ours = runner.input_ids.clone()
    K, cs = runner.num_codebooks, runner.codebook_size
    model, tokenizer = runner.model, a.runtime["text_tokenizer"]

    # The user rows the adapter committed, in order: the user channel of its audio steps
    # (a text step repeats its token over the codebooks; an audio row has one offset per
    # codebook, so never does).
    model_channel = ours[0, prefix_len:, K:]
    audio_step = ~(model_channel == model_channel[:, :1]).all(dim=1)
    user_rows = ours[0, prefix_len:, :K][audio_step]
    steps = ours.shape[1] - prefix_len
    assert steps > 40 and 0 < len(user_rows) < steps, "the tiny model must take both audio and text steps"

    # infer.py's prefix: voila_input_format on the whole file, channels transposed and joined.
    item = {"instruction": instruction,
            "conversations": [{"from": "user", "audio": {"array": audio, "sr": rate}}, {"from": "assistant"}]}
    cfg = {"input_type": "autonomous", "task_type": "chat_aiao_auto", "num_codebooks": K, "codebook_size": cs}
    channels, _, _, _ = tf.voila_input_format(item, tokenizer, runner.audio_tokenizer, cfg)
    prefix = torch.cat([torch.as_tensor([c]).transpose(1, 2) for c in channels], dim=2)
    assert torch.equal(prefix, ours[:, :prefix_len]), "the system prefix differs from infer.py's"

    def input_generator():
        yield from user_rows

    torch.manual_seed(seed)  # what the adapter's seed_all does first, with config seed 0
    with torch.inference_mode():
        upstream = model.run_generate(
            input_ids=prefix, input_generator=input_generator(), ref_embs=runner.ref_embs,
            ref_embs_mask=torch.tensor([1]), max_new_tokens=10 ** 6, pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            llm_audio_token_id=tokenizer.convert_tokens_to_ids(tf.DEFAULT_AUDIO_TOKEN),
            min_audio_token_id=runner.min_audio_token_id,
            llm_assistant_token_id=tokenizer.convert_tokens_to_ids(tf.DEFAULT_ASSISTANT_TOKEN),
            temperature=0.2, top_k=50, audio_temperature=0.8, audio_top_k=50)
    assert upstream.shape == ours.shape, f"run_generate made {upstream.shape[1] - prefix_len} steps, we {steps}"
    assert torch.equal(upstream, ours), "the sequences differ at step " + \
        str(int((upstream[0] != ours[0]).any(dim=1).nonzero()[0]) - prefix_len)

    text, codes = infer_py_readout(upstream, prefix_len, tokenizer, tf, K, cs)
    assert rec.text_ids == text
    assert rec.codes == codes and len(codes) >= len(user_rows)
