"""A tiny, randomly initialised Moshi built with the moshi library's own constructors
(loaders.get_mimi, loaders.get_moshi_lm, LMGen) and a sentencepiece model trained on the
spot: the real code paths, in seconds on a CPU. It says nothing meaningful."""

import io

import sentencepiece
import torch
from moshi.models import LMGen, loaders

import moshi_adapter

CARD = 64  # audio codebook size

MIMI_CONFIG = {
    "sample_rate": 24000,
    "channels": 1,
    "frame_rate": 12.5,
    "seanet": {**loaders._seanet_kwargs, "dimension": 16, "n_filters": 2},
    "quantizer": {"dimension": 8, "n_q": 8, "bins": CARD, "input_dimension": 16, "output_dimension": 16},
    "transformer": {**loaders._transformer_kwargs, "d_model": 16, "num_heads": 2, "num_layers": 1,
                    "dim_feedforward": 32, "input_dimension": 16, "output_dimensions": [16]},
}

LM_KWARGS = {
    **loaders._lm_kwargs,
    "dim": 32, "card": CARD, "num_heads": 2, "num_layers": 1, "hidden_scale": 2,
    "context": 64, "depformer_dim": 16, "depformer_dim_feedforward": 32, "depformer_num_heads": 2,
    "depformer_num_layers": 1,
}


def text_tokenizer() -> sentencepiece.SentencePieceProcessor:
    words = "aria what time is it the meeting starts at nine please answer when asked stay quiet".split()
    corpus = [" ".join(words[i:] + words[:i]) for i in range(len(words))] * 20
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=model,
                                             vocab_size=48, hard_vocab_limit=False, model_type="unigram",
                                             minloglevel=2)
    return sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())


def load(config: dict) -> dict:
    torch.manual_seed(1234)  # the same random weights in every process
    tok = text_tokenizer()
    mimi = loaders.get_mimi(None, MIMI_CONFIG, device="cpu", num_codebooks=8)
    lm = loaders.get_moshi_lm(None, lm_kwargs={**LM_KWARGS, "text_card": tok.get_piece_size()},
                              device="cpu", dtype=torch.float32)
    return {
        "mimi": mimi,
        "lm": lm,
        "lm_gen_class": LMGen,
        "lm_gen_config": {},
        "text_tokenizer": tok,
        "ops": moshi_adapter.TorchOps("cpu"),
        "identity": {"checkpoint": "tiny-random", "revision": "none", "library": "moshi " + __import__("moshi").__version__,
                     "torch": torch.__version__},
    }


def write_hf_cache(hub: "Path", repo: str = "tiny/moshi-random", commit: str = "0123456789abcdef0123456789abcdef01234567",
                   lm_gen_config: dict | None = None) -> None:
    """Writes the tiny model as a Hugging Face cache entry under `hub` (HF_HUB_CACHE), the
    layout hf_hub_download reads offline: models--org--name/{refs/main, snapshots/<commit>/}.
    config.json names the Mimi config and the tokenizer, as Kyutai's newer repositories do."""
    import json
    from pathlib import Path

    from safetensors.torch import save_file

    snap = Path(hub) / ("models--" + repo.replace("/", "--")) / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap.parent.parent / "refs").mkdir()
    (snap.parent.parent / "refs" / "main").write_text(commit)
    tok = text_tokenizer()
    (snap / "tokenizer.model").write_bytes(tok.serialized_model_proto())
    torch.manual_seed(1234)
    mimi = loaders.get_mimi(None, MIMI_CONFIG, device="cpu", num_codebooks=8)
    lm_kwargs = {**LM_KWARGS, "text_card": tok.get_piece_size()}
    lm = loaders.get_moshi_lm(None, lm_kwargs=lm_kwargs, device="cpu", dtype=torch.float32)
    save_file({k: v.contiguous() for k, v in mimi.state_dict().items()}, str(snap / "mimi.safetensors"))
    save_file({k: v.contiguous() for k, v in lm.state_dict().items()}, str(snap / "model.safetensors"))
    (snap / "mimi_config.json").write_text(json.dumps(MIMI_CONFIG))
    config = {**lm_kwargs, "mimi_name": "mimi.safetensors", "mimi_config_name": "mimi_config.json",
              "tokenizer_name": "tokenizer.model", "lm_gen_config": lm_gen_config or {}}
    (snap / "config.json").write_text(json.dumps(config))
