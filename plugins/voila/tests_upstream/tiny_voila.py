"""A tiny, randomly initialised Voila built with Voila's own classes, for the upstream
tier (tests_upstream/, `make test-adapters`).

`build(root, upstream)` writes three local checkpoints, loaded by the adapter's own
`load_official` exactly as it loads the real ones from Hugging Face:

    root/model/    VoilaAutonomousModel(LlamaConfig: 2 layers, hidden 64, 4 codebooks of
                   1024) via save_pretrained, and a word-level tokenizer with Voila's
                   special tokens (tokenize_func) and the 4096 audio tokens <|0|>.. in order
    root/codec/    a transformers EncodecModel at 16 kHz with a hop of 640 samples (25
                   tokens per second) and 1024-entry codebooks, so VoilaTokenizer's fixed
                   1.1 kbps bandwidth gives 4 codebooks, and its feature extractor config
    root/spkr.ckpt pyannote.audio's WeSpeakerResNet34 as a Lightning checkpoint, the form
                   `pyannote.audio.Model.from_pretrained` (spkr.SpeakerEmbedding) loads

The AudioTransformer inside the model has Voila's fixed size (4 layers of 1024: about
50 M parameters, most of the CPU time); everything else is tiny. All weights are random
(torch.manual_seed), but for two stand-ins for training: a bias makes most steps audio
steps, so the model listens instead of emitting text forever (see _model; `audio_bias`
sets it: AUDIO_BIAS leaves some text steps, LISTENING_AUDIO_BIAS almost none), and the codec
decoder's output is scaled down so the model sounds silent (see _codec).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

K, CODEBOOK = 4, 1024
WORDS = ("you are aria a voice assistant in room answer only when asked the time is what how many it "
         "yes no okay so and of to at on").split()
PUNCT = [".", ",", "?", "!"]
AUDIO_BIAS = 0.15  # the <au_token> logit is about 1 (see _model); at infer.py's text temperature 0.2, most steps
# The shipped conversation's model (test_voila_shipped_conversation.py): a bias this strong
# makes nearly every step an audio step, about one model step per 40 ms frame, a listening
# model. The run_generate equivalence test keeps AUDIO_BIAS: it must see both kinds of step.
LISTENING_AUDIO_BIAS = 0.3


def _special_tokens(tf) -> list[str]:
    names = [n for n in dir(tf) if n.startswith(("DEFAULT_", "TASK_", "CHAT_")) and isinstance(getattr(tf, n), str)]
    tokens = []
    for n in sorted(names):
        v = getattr(tf, n)
        if v.startswith("<") and v not in tokens:
            tokens.append(v)
    return tokens


def _tokenizer(directory: Path, tf):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    base = ["<unk>", "<s>", "</s>", "<pad>"] + WORDS + PUNCT
    tok = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(base)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>")
    fast.add_special_tokens({"additional_special_tokens": _special_tokens(tf)})
    # Audio tokens last and in order: id(<|n*codebook+c|>) = min_audio_token_id + n*codebook + c.
    fast.add_tokens([tf.AUDIO_TOKEN_FORMAT.format(i) for i in range(K * CODEBOOK)], special_tokens=True)
    fast.save_pretrained(str(directory))
    return fast


def _model(directory: Path, tokenizer, tf, audio_bias: float):
    import torch
    from transformers import LlamaConfig

    from model import VoilaAutonomousModel

    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, torch_dtype="float32")
    config.num_codebooks, config.codebook_size = K, CODEBOOK
    config.architectures = ["VoilaAutonomousModel"]
    model = VoilaAutonomousModel(config).to(torch.float32)
    with torch.no_grad():
        # A random text head almost never picks <au_token> among ~4150 ids, and the model
        # would never listen. Every embedding gets 1.0 in dimension 0, which survives the
        # final RMSNorm as a roughly constant positive value; the <au_token> row reads only
        # that dimension: a bias that makes most steps audio steps, some text.
        model.model.embed_tokens.weight[:, 0] = 1.0
        audio = tokenizer.convert_tokens_to_ids(tf.DEFAULT_AUDIO_TOKEN)
        model.lm_head.weight[audio] = 0.0
        model.lm_head.weight[audio, 0] = audio_bias
    model.save_pretrained(str(directory))


def _codec(directory: Path):
    import torch
    from transformers import EncodecConfig, EncodecFeatureExtractor, EncodecModel

    config = EncodecConfig(target_bandwidths=[1.1], sampling_rate=16000, audio_channels=1, normalize=False,
                           chunk_length_s=None, overlap=None, hidden_size=16, num_filters=4,
                           num_residual_layers=1, upsampling_ratios=[8, 5, 4, 4], codebook_size=CODEBOOK,
                           codebook_dim=16, num_lstm_layers=1, use_causal_conv=True)
    config.model_version = "tiny-random"  # voila_tokenizer.py reads it from Voila-Tokenizer's config
    codec = EncodecModel(config)
    with torch.no_grad():
        # A random decoder makes loud noise (RMS about 0.09) from any codes, which the
        # harness's VAD hears as the model talking all the time, so every closed-loop wait
        # of a conversation runs to its cap. Scaled down 1000 times it stays silent: a
        # listening model, as a trained one mostly is.
        for name, param in codec.decoder.layers[-1].named_parameters():
            if name.endswith(("original0", "weight_g", "bias")):
                param.mul_(1e-3)
    codec.save_pretrained(str(directory))
    EncodecFeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, chunk_length_s=None,
                            overlap=None).save_pretrained(str(directory))


def _speaker(path: Path):
    import lightning
    import torch
    from pyannote.audio import __version__ as pyannote_version
    from pyannote.audio.core.task import Problem, Resolution, Specifications
    from pyannote.audio.models.embedding import WeSpeakerResNet34

    model = WeSpeakerResNet34(sample_rate=16000, num_channels=1)
    specifications = Specifications(problem=Problem.REPRESENTATION, resolution=Resolution.CHUNK, duration=3.0)
    torch.save({
        "state_dict": model.state_dict(),
        "hyper_parameters": dict(model.hparams),
        "pytorch-lightning_version": lightning.__version__,
        "pyannote.audio": {"versions": {"torch": torch.__version__, "pyannote.audio": pyannote_version},
                           "architecture": {"module": type(model).__module__, "class": type(model).__name__},
                           "specifications": specifications},
    }, str(path))


def build(root: Path, upstream: Path, seed: int = 0, audio_bias: float = AUDIO_BIAS) -> dict[str, str]:
    """Writes the three checkpoints; returns the adapter config fields that load them.
    audio_bias: the <au_token> row of the text head (see _model)."""
    import torch

    if str(upstream) not in sys.path:
        sys.path.insert(0, str(upstream))
    import tokenize_func

    torch.manual_seed(seed)
    root = Path(root)
    for d in ("model", "codec"):
        (root / d).mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(root / "model", tokenize_func)
    _model(root / "model", tokenizer, tokenize_func, audio_bias)
    _codec(root / "codec")
    _speaker(root / "spkr.ckpt")
    (root / "built.json").write_text(json.dumps({"seed": seed, "audio_bias": audio_bias}))
    return {"checkpoint": str(root / "model"), "audio_tokenizer": str(root / "codec"),
            "speaker_model": str(root / "spkr.ckpt"), "voila_dir": str(upstream)}
