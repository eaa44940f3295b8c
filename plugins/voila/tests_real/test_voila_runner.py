"""VoilaRunner (the torch side of the voila adapter: one step of
VoilaAutonomousModel.run_generate at a time) on CPU torch, against a torch stand-in of
the model's interface (the calls run_generate makes, with its tensor shapes). The real
8 B model needs CUDA and flash-attn; this checks our tensor plumbing: the prefix layout,
the codebook offsets, the Voila head's assistant token, [user | model] rows, and the step
loop end to end with the numpy codec stand-in. Run by `make test-adapters`."""

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parents[1] / "_standins"), str(HERE.parents[1] / "_common")]
import standin_voila  # noqa: E402
import voila_adapter as va  # noqa: E402

K, CODEBOOK, VOCAB, HIDDEN = 4, 16, 200, 8
AUDIO_MIN, AUDIO_TOKEN, ASSISTANT, EOS, PAD, HUMAN = 100, 7, 8, 2, 0, 9
SYSTEM_IDS = [11, 12, 13]


class Tokenizer:
    eos_token_id, pad_token_id = EOS, PAD
    ids = {"<|0|>": AUDIO_MIN, f"<|{K * CODEBOOK - 1}|>": AUDIO_MIN + K * CODEBOOK - 1, "<au_token>": AUDIO_TOKEN,
           "<|VOILA|>": ASSISTANT}

    def convert_tokens_to_ids(self, token):
        return self.ids[token]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(f" t{i}" for i in ids if i not in (ASSISTANT, EOS))


def voila_input_format(item, tokenizer, audio_tokenizer, cfg):
    """tokenize_func's autonomous prefix: system ids (+ instruction) + HUMAN, per codebook, twice."""
    assert cfg["task_type"] == "chat_aiao_auto" and cfg["input_type"] == "autonomous"
    ids = SYSTEM_IDS[:-1] + [40 + len(item["instruction"])] + SYSTEM_IDS[-1:] + [HUMAN]
    channel = [list(ids) for _ in range(cfg["num_codebooks"])]
    return [channel, [list(c) for c in channel]], None, None, None


TOKENIZE_FUNC = SimpleNamespace(AUDIO_TOKEN_FORMAT="<|{}|>", DEFAULT_AUDIO_TOKEN="<au_token>",
                                DEFAULT_ASSISTANT_TOKEN="<|VOILA|>", SEG_LEN=640, AUDIO_SR=16000,
                                voila_input_format=voila_input_format)


class Model:
    """run_generate's view of VoilaAutonomousModel. A script of what to say, by step:
    'a' audio (the text head picks the audio token), 't' a text token, 'h' the Voila
    head fires (text picks 21), 'e' end of sequence; audio after the script ends."""

    def __init__(self, script):
        self.config = SimpleNamespace(num_codebooks=K, codebook_size=CODEBOOK)
        self.script, self.step = script, 0
        self.seen = []
        self.audio_transformer = SimpleNamespace(inference=self._audio)

    def _prepare_attention_mask_for_generation(self, input_ids, pad, eos):
        return torch.ones(input_ids.shape[:2], dtype=torch.long)

    def _prepare_inputs_for_generation(self, input_ids, ref_embs=None, ref_embs_mask=None, **kw):
        assert input_ids.dim() == 3 and input_ids.shape[2] == 2 * K
        self.seen.append((input_ids.clone(), ref_embs, ref_embs_mask, kw["past_key_values"]))
        return {"input_ids": input_ids}

    def __call__(self, input_ids, return_dict=True):
        kind = self.script[self.step] if self.step < len(self.script) else "a"
        self.step += 1
        logits = torch.full((1, input_ids.shape[1], VOCAB), -1e4)
        token = {"a": AUDIO_TOKEN, "t": 30 + self.step, "h": 21, "e": EOS}[kind]
        logits[0, -1, token] = 1e4
        pred = torch.zeros((1, input_ids.shape[1], 2))
        pred[0, -1, 1 if kind == "h" else 0] = 1.0
        return SimpleNamespace(logits=logits, voila_pred=pred,
                               last_hidden_state=torch.full((1, input_ids.shape[1], HIDDEN), float(self.step)))

    def _audio(self, hidden, temperature, top_k):
        assert hidden.shape == (1, hidden.shape[1], HIDDEN)
        return torch.tensor([[[int(hidden[0, -1, 0]) % CODEBOOK + c for c in range(K)]]]) % CODEBOOK

    def _update_model_kwargs_for_generation(self, outputs, kw):
        return {**kw, "attention_mask": torch.cat([kw["attention_mask"], torch.ones(1, 1, dtype=torch.long)], dim=1)}


def runner(script, ref_embs=None):
    cfg = {"temperature": 0.2, "top_k": 50, "audio_temperature": 0.8, "audio_top_k": 50}
    return va.VoilaRunner(Model(script), Tokenizer(), object(), TOKENIZE_FUNC, ref_embs, cfg, device="cpu",
                          new_cache=dict)


def test_prefix_layout_is_user_k_then_model_k():
    r = runner("a")
    r.start("hi")
    assert r.input_ids.shape == (1, 5, 2 * K)
    assert r.input_ids[0, :, 0].tolist() == [11, 12, 42, 13, HUMAN]  # instruction before the last system id
    assert torch.equal(r.input_ids[0, :, :K], r.input_ids[0, :, K:])


def test_audio_rows_carry_codebook_offsets_and_take_the_user_row():
    r = runner("a")
    r.start("")
    row, is_audio = r.propose()
    assert is_audio and row.dtype == np.int64 and row.shape == (K,)
    codes = (row - AUDIO_MIN) % CODEBOOK
    assert list(row) == [AUDIO_MIN + c * CODEBOOK + int(codes[c]) for c in range(K)]
    assert r.propose()[0].tolist() == row.tolist()  # pending until committed
    user = np.array([AUDIO_MIN + c * CODEBOOK + 3 for c in range(K)], dtype=np.int64)
    r.commit(user)
    assert r.input_ids.shape == (1, 6, 2 * K)
    assert r.input_ids[0, -1, :K].tolist() == user.tolist() and r.input_ids[0, -1, K:].tolist() == row.tolist()


def test_head_forces_the_assistant_token_and_eos_ends_speaking():
    r = runner("htte")
    r.start("")
    rows = []
    for _ in range(4):
        row, is_audio = r.propose()
        assert not is_audio
        r.commit(None)
        rows.append(int(row[0]))
        if len(rows) == 1:
            assert r.speaking
    assert rows[0] == ASSISTANT and rows[-1] == EOS and not r.speaking
    assert torch.equal(r.input_ids[0, -1, :K], r.input_ids[0, -1, K:])  # text rows: [row | row]


def test_reference_voice_is_passed_with_its_mask():
    emb = torch.ones(1, 256)
    r = runner("a", ref_embs=emb)
    r.start("")
    r.propose()
    _, ref, mask, cache = r.model.seen[-1]
    assert ref is emb and mask.tolist() == [1] and cache == {}


def test_the_adapter_step_loop_on_the_torch_runner():
    def load(config):
        rt = standin_voila.load(config)
        rt.update(runner=runner("aaatttaaae"), text_tokenizer=Tokenizer(), ops=va.TorchOps())
        return rt

    sys.modules["voila_runner_factory"] = SimpleNamespace(load=load)
    a = va.VoilaAdapter()
    a.configure({"factory": "voila_runner_factory:load"})
    conv = a.start("c", seed=1)
    outs = [conv.step(np.zeros(640, np.float32)) for _ in range(12)]
    assert all(o.samples.size == 640 for o in outs)
    assert sum(bool(o.text) for o in outs) == 1
    # The prefix, 12 audio rows (one per frame's user row) and 4 text rows (3 tokens, EOS).
    assert a.runtime["runner"].input_ids.shape[1] == 5 + 12 + 4
