"""A tiny, randomly initialised Freeze-Omni checkpoint built with Freeze-Omni's own
constructors and config formats, and the switch that runs its CUDA-only code on CPU.

`build(root, upstream)` writes what `bin/server.py --model_path M --llm_path L` loads:

    L/                     a Qwen2 (transformers' Qwen2Config, 1 layer, hidden 896: the
                           server reshapes LLM states to 896 wide) and a word-level
                           tokenizer with Qwen's chat tokens
    M/server.json          the decoder settings bin/server.py reads
    M/audiollm/train.yaml  init_encoder_llm's config: speechEncoder (subsampling +
                           rel-enc transformer, chunk 4), CNNSubsampling adapter,
                           chat template, a 4-way state head
    M/audiollm/global_cmvn JSON CMVN stats (is_json_cmvn)
    M/audiollm/final.pt    AudioLLM's state dict
    M/decoder/model.json   [idim, odim, args] of LLM2TTSCodecAR, and final.pt
    M/codec/model.json     TiCodec's VQVAE config (upsampling 600 = 25 ms per token), final.pt

Every weight is random (torch.manual_seed(seed)) except a few biases that stand in for
training: the state head leans to "start speaking" (so a conversation exercises the
answer path), the LLM ends sentences and answers now and then (see _llm), and the TTS
decoder never samples its bos/sos/pad ids.

`cuda_on_cpu()` makes the upstream code's hard-coded CUDA run on CPU: `.to("cuda")`
and `.cuda()` stay on CPU, `torch.autocast("cuda", bfloat16)` becomes CPU autocast in
bfloat16 and `torch.cuda.is_bf16_supported()` is True, as on the GPUs the server runs
on. Nothing else of the upstream code changes.

`load(config)` is the adapter's `factory` for the tests: it turns the switch on and calls
the adapter's own `load_official(config)` (config's model_path and llm_path point at a
build).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

QWEN_HIDDEN = 896  # bin/server.py decoder(): reshape(-1, 896)
WORDS = ("you are a helpful voice assistant your answer should be coherent natural simple complete name is "
         "xiao yun inventor tencent the time oven chicken what when how many minutes hour bus i it we they "
         "yes no okay so and of to in at on").split()
PUNCT = [".", ",", "?", "!", ":"]
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<audio><|im_end|>\n"
                 "<|im_start|>assistant\n")
ENC_DIM = 32
EOD_LOGIT = 0.8  # see _llm: answers of some tens of tokens
SENTENCE_END_LOGIT = 0.3
TTS_CODES = 16  # LLM2TTSCodecAR odim: codec token ids 0..15

SERVER_JSON = {
    "decoder_first_chunk_size": 20, "decoder_chunk_size": 40, "decoder_chunk_overlap_size": 10,
    "decoder_seg_threshold_first_pack": 0.1, "decoder_seg_threshold": 0.015, "decoder_top_k": 2,
    "decoder_penalty_window_size": 20, "decoder_penalty": 1.1, "decoder_N": 2401,
}

_installed = False


def cuda_on_cpu() -> None:
    """Runs code written for CUDA on CPU (see the module docstring). Idempotent."""
    global _installed
    if _installed:
        return
    import torch

    def cpu(device):
        if isinstance(device, str) and device.startswith("cuda"):
            return "cpu"
        if isinstance(device, torch.device) and device.type == "cuda":
            return torch.device("cpu")
        return device

    def moving(original):
        def to(self, *args, **kwargs):
            args = tuple(cpu(a) for a in args)
            if "device" in kwargs:
                kwargs["device"] = cpu(kwargs["device"])
            return original(self, *args, **kwargs)
        return to

    torch.Tensor.to = moving(torch.Tensor.to)
    torch.nn.Module.to = moving(torch.nn.Module.to)
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    torch.cuda.is_bf16_supported = lambda *a, **k: True

    class autocast(torch.autocast):  # noqa: N801 - replaces torch.autocast
        def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
            if device_type == "cuda":
                device_type, dtype = "cpu", torch.bfloat16
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    torch.autocast = autocast
    _installed = True


def _tokenizer(directory: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(SPECIAL + ["[UNK]"] + WORDS + PUNCT)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", additional_special_tokens=SPECIAL[1:2])
    fast.add_special_tokens({"additional_special_tokens": SPECIAL})
    fast.save_pretrained(str(directory))


def _llm(directory: Path) -> None:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    _tokenizer(directory)
    vocab = SPECIAL + ["[UNK]"] + WORDS + PUNCT
    config = Qwen2Config(vocab_size=len(vocab), hidden_size=QWEN_HIDDEN, intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=4096,
                         tie_word_embeddings=False, bos_token_id=0, eos_token_id=2, torch_dtype="float32")
    llm = Qwen2ForCausalLM(config).to(torch.float32).eval()
    with torch.no_grad():
        # A random LM never ends an answer (it runs to the server's 500-token cap) and
        # rarely ends a sentence. Every embedding gets 1.0 in dimension 0, which survives
        # the final RMSNorm as a roughly constant positive value; the rows of <|im_end|>
        # and the sentence ends read only that dimension: biases for them.
        llm.model.embed_tokens.weight[:, 0] = 1.0
        ids = torch.arange(len(vocab))[None]
        level = float(llm.model(input_ids=ids).last_hidden_state[0, :, 0].mean())
        # [UNK] and the other specials decode to nothing, a text bin/server.py cannot voice
        # (see freeze_omni_adapter.TorchBridge.synthesize): a trained Qwen never says them.
        never = [(t, -10.0) for t in ("<|endoftext|>", "<|im_start|>", "[UNK]")]
        for token, logit in [("<|im_end|>", EOD_LOGIT), (".", SENTENCE_END_LOGIT), ("?", SENTENCE_END_LOGIT)] + never:
            row = vocab.index(token)
            llm.lm_head.weight[row] = 0.0
            llm.lm_head.weight[row, 0] = logit / level
    llm.save_pretrained(str(directory))


def _train_yaml(model_path: Path) -> dict:
    return {
        "input_dim": 80, "output_dim": 1, "is_json_cmvn": True,
        "encoder_conf": {
            "overview_conf": {"encoder-input-dim": 80, "encoder-output-dim": ENC_DIM,
                              "encoder-layer-config": "subsampling-transformer"},
            "para_conf": {
                "subsampling": {"subsampling-rate": 4, "subsampling-input-dim": 80,
                                "subsampling-output-dim": ENC_DIM, "subsampling-dropout-rate": 0.0},
                "transformer": {"transformer-input-dim": ENC_DIM, "transformer-output-dim": ENC_DIM,
                                "transformer-attention-dim": ENC_DIM, "transformer-attention-heads": 2,
                                "transformer-linear-units": 64, "transformer-num-blocks": 2,
                                "transformer-dropout-rate": 0.0, "transformer-attention-dropout-rate": 0.0,
                                "transformer-positional-dropout-rate": 0.0, "transformer-input-layer": "none",
                                "transformer-pos-enc-class": "rel-enc", "transformer-chunk_size": 4,
                                "transformer-left_chunks": 4, "transformer-dynamic-chunks": False},
            },
        },
        "model_conf": {"enc_out_dim": ENC_DIM, "llm_embed_dim": QWEN_HIDDEN, "kernel_size": 3,
                       "adpter_type": "subsampling", "llm_head_num": 14, "num_key_value_heads": 2,
                       "chat_template": CHAT_TEMPLATE, "predict_usr_state": 4, "freeze_llm": True},
    }


def _decoder_args() -> dict:
    return {"idim": QWEN_HIDDEN, "odim": TTS_CODES, "encoder_pre_norm_type": "ln", "encoder_drop_rate": 0.0,
            "encoder_criterion": "ce", "encoder_upsample_rate": 1, "kv_cache_prefix_finetune": 0,
            "encoder_output_dim": QWEN_HIDDEN, "transformer_attention_dim": QWEN_HIDDEN,
            "transformer_linear_units": 128, "transformer_num_blocks": 2, "transformer_attention_heads": 14,
            "transformer_dropout_rate": 0.0}


CODEC = {"resblock": "2", "upsample_rates": [6, 5, 5, 4], "upsample_kernel_sizes": [12, 10, 10, 8],
         "upsample_initial_channel": 256, "resblock_kernel_sizes": [3], "resblock_dilation_sizes": [[1, 3]],
         "n_code_groups": 1, "residul_layer": 1, "n_codes": TTS_CODES, "global_code_num": 2,
         "global_feature_conv": [128, 64, 128, 3, 1], "global_tokens": [3, 7],
         "codebook_loss_lambda": 1.0, "commitment_loss_lambda": 0.25, "sampling_rate": 24000}


def build(root: Path, upstream: Path, seed: int = 0) -> tuple[Path, Path]:
    """Writes the checkpoint under root; returns (model_path, llm_path)."""
    import torch
    import yaml

    if str(upstream) not in sys.path:
        sys.path.insert(0, str(upstream))
    from models.decoder.decoder import LLM2TTSCodecAR
    from models.decoder.ticodec.models import Encoder, Generator, Quantizer
    from models.decoder.ticodec.vqvae import AttrDict
    from models.utils import init_encoder_llm

    torch.manual_seed(seed)
    root = Path(root)
    llm_path, model_path = root / "llm", root / "model"
    for d in (llm_path, model_path / "audiollm", model_path / "decoder", model_path / "codec"):
        d.mkdir(parents=True, exist_ok=True)
    _llm(llm_path)
    (model_path / "server.json").write_text(json.dumps(SERVER_JSON, indent=1))

    configs = _train_yaml(model_path)
    (model_path / "audiollm" / "train.yaml").write_text(yaml.safe_dump(configs))
    rng = np.random.default_rng(seed)
    frames = 1000
    mean = rng.normal(10.0, 2.0, 80)
    (model_path / "audiollm" / "global_cmvn").write_text(json.dumps({
        "mean_stat": (mean * frames).tolist(), "var_stat": ((mean ** 2 + 4.0) * frames).tolist(),
        "frame_num": frames}))
    configs = {**configs, "cmvn_file": str(model_path / "audiollm" / "global_cmvn")}
    configs["model_conf"] = {**configs["model_conf"], "llm_path": str(llm_path)}
    audiollm = init_encoder_llm(configs)
    with torch.no_grad():
        # The state head over (listen, speak, end, -): lean to "start speaking" (and not
        # read the LLM's constant dimension 0, see _llm).
        audiollm.predictor_head.weight[:, 0] = 0.0
        audiollm.predictor_head.bias.copy_(torch.tensor([0.0, 2.5, -2.5, 0.0]))
    torch.save(audiollm.state_dict(), model_path / "audiollm" / "final.pt")

    args = _decoder_args()
    (model_path / "decoder" / "model.json").write_text(json.dumps([QWEN_HIDDEN, TTS_CODES, args]))
    from argparse import Namespace
    tts = LLM2TTSCodecAR(QWEN_HIDDEN, TTS_CODES, Namespace(**args))
    with torch.no_grad():
        bias = tts.out_fnn.bias
        bias[TTS_CODES] = bias[TTS_CODES + 1] = bias[TTS_CODES + 3] = -1e4  # bos, sos, pad: never sampled
    torch.save({"model": tts.state_dict()}, model_path / "decoder" / "final.pt")

    (model_path / "codec" / "model.json").write_text(json.dumps(CODEC, indent=1))
    h = AttrDict(CODEC)
    torch.save({"generator": Generator(h).state_dict(), "quantizer": Quantizer(h).state_dict(),
                "encoder": Encoder(h).state_dict()}, model_path / "codec" / "final.pt")
    return model_path, llm_path


def load(config: dict) -> dict:
    cuda_on_cpu()
    import freeze_omni_adapter

    return freeze_omni_adapter.load_official(config)
