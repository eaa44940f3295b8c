"""A tiny, randomly initialised FLM-Audio built with upstream's own constructors and
configuration classes, from the checkout named by DUPLEXMPE_UPSTREAM_FLM_AUDIO (a clone of
cofe-ai/flm-audio, e.g. the snapshot of 41d768c), used exactly as shipped:

- the LM: `FLMAudioConfig` with FLM-Audio's released structure (8 audio channels, a
  DepthGPT with cmlp, rmsnorm and swiglu, mup, attention bias without the o-projection
  bias) at toy sizes, and `FLMAudioForCausalLM(config)`;
- Mimi: the vendored `MimiModel` assembled as `loaders._get_mimi` does, from
  `loaders._seanet_kwargs`, `_transformer_kwargs` and `_quantizer_kwargs` with small
  dimensions (the full-size Mimi costs over a second per frame on these CPUs);
- a word-level tokenizer saved as a transformers tokenizer.

The audio codebook is as large as the LM's audio vocabulary (so any token the random depth
transformer samples, padding ids included, decodes), where the release has 2048 codes and
2050 ids. It says nothing meaningful. `load` is the adapter's `factory`; `write_checkpoint`
writes the same model as a checkpoint directory for the adapter's official loader.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ENV = "DUPLEXMPE_UPSTREAM_FLM_AUDIO"
TEXT_VOCAB = 64
WAIT_TOKEN = 5
AUDIO_CODES = 64  # Mimi's codebook: ids 0..63, then the LM's padding and empty ids
MIMI_NAME = "tokenizer-e351c8d8-checkpoint125.safetensors"


def checkout() -> Path:
    value = os.environ.get(ENV, "")
    if not value:
        raise RuntimeError(f"{ENV} is not set: point it at a checkout of cofe-ai/flm-audio")
    path = Path(value).resolve()
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    return path


def config_kwargs() -> dict:
    return dict(
        vocab_size=TEXT_VOCAB, aud_vocab_size=AUDIO_CODES + 2, aud_channel=8,
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=1000000.0,
        mm_token_info={"text_wait_token_id": WAIT_TOKEN, "aud_pad_token_id": AUDIO_CODES,
                       "aud_emp_token_id": AUDIO_CODES + 1},
        aud_depthgpt={"n_layer": 1, "n_head": 2, "n_embd": 16, "dropout": 0.0, "bias": False,
                      "use_cmlp": True, "use_rmsnorm": True, "use_swiglu": True},
        attention_bias=True, disable_att_o_bias=True, use_mup=True, mup_scale_factor=2.0, output_mult=2.0,
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
    )


def build_lm():
    import torch

    checkout()
    from flmaudio.models import FLMAudioForCausalLM
    from flmaudio.models.configuration_flmaudio import FLMAudioConfig

    torch.manual_seed(4321)  # the same random weights in every process
    return FLMAudioForCausalLM(FLMAudioConfig(**config_kwargs())).eval()


def build_mimi(device: str = "cpu"):
    import torch

    checkout()
    from flmaudio.models import loaders
    from flmaudio.third_party.moshi.models import MimiModel
    from flmaudio.third_party.moshi.modules import SEANetDecoder, SEANetEncoder, transformer
    from flmaudio.third_party.moshi.quantization import SplitResidualVectorQuantizer

    torch.manual_seed(8765)
    seanet = {**loaders._seanet_kwargs, "dimension": 16, "n_filters": 2}
    trans = {**loaders._transformer_kwargs, "d_model": 16, "num_heads": 2, "num_layers": 1, "dim_feedforward": 32,
             "input_dimension": 16, "output_dimensions": [16]}
    quant = {**loaders._quantizer_kwargs, "dimension": 8, "bins": AUDIO_CODES + 2, "input_dimension": 16,
             "output_dimension": 16}
    encoder, decoder = SEANetEncoder(**seanet), SEANetDecoder(**seanet)
    mimi = MimiModel(encoder, decoder, SplitResidualVectorQuantizer(**quant), channels=1,
                     sample_rate=loaders.SAMPLE_RATE, frame_rate=loaders.FRAME_RATE,
                     encoder_frame_rate=loaders.SAMPLE_RATE / encoder.hop_length, causal=True, resample_method="conv",
                     encoder_transformer=transformer.ProjectedTransformer(device=device, **trans),
                     decoder_transformer=transformer.ProjectedTransformer(device=device, **trans)).to(device)
    mimi.eval()
    mimi.set_num_codebooks(8)
    return mimi


def tokenizer():
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<epad>": 3, "[UNK]": 4, "<wait>": WAIT_TOKEN}
    words = "aria what time is it the meeting starts at nine please answer when asked stay quiet".split()
    for w in words + [f"w{i}" for i in range(TEXT_VOCAB)]:
        if len(vocab) < TEXT_VOCAB:
            vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="<pad>")


def load(config: dict) -> dict:
    """The adapter's factory: the tiny model, as load_official would hand it over."""
    import torch
    import transformers

    from adapter_kit import TorchOps

    import flm_audio_adapter

    repo = checkout()
    torch.set_num_threads(1)  # tiny matrices: one thread is faster, and bitwise repeatable
    return {
        "mimi": build_mimi(config.get("device", "cpu")),
        "lm": build_lm().to(config.get("device", "cpu")),
        "lm_gen_class": __import__("flmaudio.models", fromlist=["LMGen"]).LMGen,
        "tokenizer": tokenizer(),
        "ops": TorchOps(config.get("device", "cpu")),
        "identity": {"checkpoint": "tiny-random", "revision": "none",
                     "library": f"flmaudio {flm_audio_adapter._git_head(repo)}",
                     "flmaudio_code": flm_audio_adapter.code_digest(repo / "flmaudio"),
                     "transformers": transformers.__version__, "torch": torch.__version__},
    }


def write_checkpoint(out: Path, remote_code: bool = False) -> Path:
    """The tiny LM and tokenizer as a checkpoint directory, as CofeAI/FLM-Audio lays it out
    (config.json, safetensors, tokenizer files, Mimi's file by its released name). Mimi is
    the full-size one `loaders.get_mimi` builds, randomly initialised, in float16 to halve
    the file (about 160 MB). With remote_code, the checkout's modeling files are copied in
    and config.json gets an auto_map, so trust_remote_code loads them from the checkpoint."""
    import shutil

    import torch
    from safetensors.torch import save_model

    repo = checkout()
    from flmaudio.models import loaders

    out.mkdir(parents=True, exist_ok=True)
    lm = build_lm()
    lm.save_pretrained(str(out))
    tokenizer().save_pretrained(str(out))
    torch.manual_seed(99)
    full = _full_mimi(loaders)
    save_model(full.half(), str(out / MIMI_NAME))
    if remote_code:
        for name in ("modeling_flmaudio.py", "configuration_flmaudio.py", "depth_gpt.py"):
            shutil.copy(repo / "flmaudio" / "models" / name, out / name)
        cfg = json.loads((out / "config.json").read_text())
        cfg["auto_map"] = {"AutoConfig": "configuration_flmaudio.FLMAudioConfig",
                           "AutoModelForCausalLM": "modeling_flmaudio.FLMAudioForCausalLM"}
        (out / "config.json").write_text(json.dumps(cfg, indent=2))
    return out


def _full_mimi(loaders):
    """Mimi exactly as loaders._get_mimi assembles it, without loading a file."""
    from flmaudio.third_party.moshi.models import MimiModel
    from flmaudio.third_party.moshi.modules import SEANetDecoder, SEANetEncoder, transformer
    from flmaudio.third_party.moshi.quantization import SplitResidualVectorQuantizer

    encoder, decoder = SEANetEncoder(**loaders._seanet_kwargs), SEANetDecoder(**loaders._seanet_kwargs)
    return MimiModel(encoder, decoder, SplitResidualVectorQuantizer(**loaders._quantizer_kwargs), channels=1,
                     sample_rate=loaders.SAMPLE_RATE, frame_rate=loaders.FRAME_RATE,
                     encoder_frame_rate=loaders.SAMPLE_RATE / encoder.hop_length, causal=True, resample_method="conv",
                     encoder_transformer=transformer.ProjectedTransformer(device="cpu", **loaders._transformer_kwargs),
                     decoder_transformer=transformer.ProjectedTransformer(device="cpu", **loaders._transformer_kwargs))
