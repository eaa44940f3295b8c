"""The flm-audio adapter's official loader on real transformers and torch, through the
plugin process: `flmaudio_dir` put on the path, the checkpoint read from a local
directory, the tokenizer by transformers' AutoTokenizer, the checkout's commit read from
its .git. flmaudio is not on PyPI (and its backbone is 7 B parameters), so the checkout
is written on the spot with a stand-in `flmaudio.models` (the numpy stand-in's behaviour
behind torch tensors)."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PLUGIN_DIR = Path(__file__).resolve().parents[1]
STANDINS = PLUGIN_DIR.parent / "_standins"
COMMIT = "41d768c9f61d954907c1c518709f2d9239de46a8"

MODELS = '''
"""Stand-in flmaudio.models: standin_flmaudio's behaviour with torch tensors in and out."""
import torch

import standin_flmaudio as s


class _Mimi:
    sample_rate, frame_rate = 24000, 12.5

    def __init__(self):
        self.inner = s.loaders.get_mimi("x")

    def streaming_forever(self, n):
        self.inner.streaming_forever(n)

    def reset_streaming(self):
        self.inner.reset_streaming()

    def encode(self, x):
        assert isinstance(x, torch.Tensor) and x.dtype == torch.float32 and x.shape[:2] == (1, 1)
        return torch.from_numpy(self.inner.encode(x.numpy()))

    def decode(self, codes):
        assert isinstance(codes, torch.Tensor) and codes.shape[1] == 8
        return torch.from_numpy(self.inner.decode(codes.numpy()))


class loaders:
    @staticmethod
    def get_mimi(path, device="cpu"):
        assert (__import__("pathlib").Path(path) / "config.json").is_file()
        return _Mimi()


class FLMAudioForCausalLM(s.FLMAudioForCausalLM):
    @classmethod
    def from_pretrained(cls, path, device_map="cpu", torch_dtype=None, low_cpu_mem_usage=True):
        assert torch_dtype is torch.float32 and device_map == "cpu"
        return super().from_pretrained(path, device_map=device_map)


class LMGen(s.LMGen):
    def step(self, input_tokens):
        out = super().step(input_tokens.numpy())
        return None if out is None else torch.from_numpy(out)
'''


def write_checkout_and_checkpoint(root: Path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    repo = root / "flm-audio"
    (repo / "flmaudio" / "models").mkdir(parents=True)
    (repo / "flmaudio" / "__init__.py").write_text("")
    (repo / "flmaudio" / "models" / "__init__.py").write_text(MODELS)
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads" / "main").write_text(COMMIT + "\n")

    ckpt = root / "FLM-Audio"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"model_type": "flmaudio"}))
    vocab = {f"w{i}": i for i in range(64)} | {"[UNK]": 64}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(str(ckpt))
    return repo, ckpt


def test_official_loader_from_a_checkout(tmp_path):
    from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
    from duplexmpe_plugin.testing import launch

    repo, ckpt = write_checkout_and_checkpoint(tmp_path)
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(STANDINS), os.environ.get("PYTHONPATH", "")])}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR), timeout=120) as p:
        config = {"checkpoint": str(ckpt), "flmaudio_dir": str(repo), "device": "cpu", "dtype": "float32"}
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(config)), timeout=300)
        ident = p.plugin.Describe(plugin_pb2.DescribeRequest()).identity
        assert ident["library"] == f"flmaudio {COMMIT}" and ident["revision"] == "local"
        assert ident["transformers"] == transformers.__version__

        t = np.arange(1920) / 24000
        loud = (0.5 * np.sin(2 * np.pi * 200 * t)).astype("<f4")
        frames = [loud] * 4 + [np.zeros(1920, "<f4")] * 20

        def requests():
            yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=2))
            for i, f in enumerate(frames):
                yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.tobytes()))
            yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())

        replies = [r.frame for r in p.model.Converse(requests(), timeout=300)][1:]
        assert p.shutdown() == 0
    assert [len(r.pcm) // 4 for r in replies] == [0] + [1920] * 23
    text = "".join(r.text for r in replies)
    # Token ids 10..29 decoded by the real AutoTokenizer (word level, "w10" ...), and the
    # segment closed by the wait token.
    words = text.split()
    assert text.endswith("\n") and words and all(w.startswith("w") and 10 <= int(w[1:]) < 30 for w in words)
