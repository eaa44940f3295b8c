"""The minicpm-o adapter's official loader (transformers AutoModel with trust_remote_code,
init_tts, as_duplex, the default reference voice from the checkpoint's assets) on real
transformers and torch, through the plugin process. The checkpoint is a local directory
written on the spot whose remote code is a stand-in of MiniCPM-o's duplex API (the
numpy stand-in's behaviour, returning torch waveforms); the real one is 9 B parameters."""

import json
import os
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PLUGIN_DIR = Path(__file__).resolve().parents[1]
STANDINS = PLUGIN_DIR.parent / "_standins"

CONFIGURATION = '''
from transformers import PretrainedConfig


class FakeMiniCPMOConfig(PretrainedConfig):
    model_type = "fake_minicpmo"

    def __init__(self, hidden=4, **kwargs):
        self.hidden = hidden
        super().__init__(**kwargs)
'''

MODELING = '''
import numpy as np
import torch
from transformers import PreTrainedModel

import standin_minicpmo

from .configuration_fake import FakeMiniCPMOConfig


class TorchDuplex(standin_minicpmo.Duplex):
    def streaming_generate(self, **kwargs):
        r = super().streaming_generate(**kwargs)
        r["audio_waveform"] = torch.from_numpy(r["audio_waveform"])  # the real one may hand back tensors
        return r


class FakeMiniCPMO(PreTrainedModel):
    config_class = FakeMiniCPMOConfig
    _supports_sdpa = True

    def __init__(self, config, init_vision=True, init_audio=True, init_tts=True):
        super().__init__(config)
        self.init_flags = {"vision": init_vision, "audio": init_audio, "tts": init_tts}
        self.proj = torch.nn.Linear(config.hidden, config.hidden)
        self.tts_ready = False

    def init_tts(self, **kwargs):
        self.tts_ready = True

    def as_duplex(self, **kwargs):
        assert self.tts_ready and self.init_flags == {"vision": False, "audio": True, "tts": True}
        assert self.proj.weight.dtype == torch.float32 and not self.training
        return TorchDuplex(self)
'''


def write_checkpoint(root: Path) -> Path:
    from safetensors.torch import save_file

    ckpt = root / "MiniCPM-o-fake"
    (ckpt / "assets").mkdir(parents=True)
    (ckpt / "configuration_fake.py").write_text(CONFIGURATION)
    (ckpt / "modeling_fake.py").write_text(MODELING)
    (ckpt / "config.json").write_text(json.dumps({
        "model_type": "fake_minicpmo", "hidden": 4, "architectures": ["FakeMiniCPMO"],
        "auto_map": {"AutoConfig": "configuration_fake.FakeMiniCPMOConfig", "AutoModel": "modeling_fake.FakeMiniCPMO"}}))
    save_file({"proj.weight": torch.eye(4), "proj.bias": torch.zeros(4)}, str(ckpt / "model.safetensors"))
    with wave.open(str(ckpt / "assets" / "HT_ref_audio.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes((np.sin(np.arange(4000) / 5) * 8000).astype("<i2").tobytes())
    return ckpt


def test_official_loader_with_remote_code(tmp_path):
    from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
    from duplexmpe_plugin.testing import launch

    ckpt = write_checkpoint(tmp_path)
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(STANDINS), os.environ.get("PYTHONPATH", "")])}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR), timeout=120) as p:
        config = {"checkpoint": str(ckpt), "device": "cpu", "dtype": "float32"}
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(config)), timeout=300)
        ident = p.plugin.Describe(plugin_pb2.DescribeRequest()).identity
        assert ident["checkpoint"] == str(ckpt) and ident["revision"] == "local"
        assert ident["transformers"] == transformers.__version__ and ident["torch"] == torch.__version__
        assert len(ident["ref_audio_sha256"]) == 64  # assets/HT_ref_audio.wav was picked up

        t = np.arange(16000) / 16000
        speech = (0.4 * np.sin(2 * np.pi * 180 * t)).astype("<f4")
        units = [speech, speech] + [np.zeros(16000, "<f4")] * 4

        def requests():
            yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=4))
            for i, u in enumerate(units):
                yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=u.tobytes()))
            yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())

        replies = list(p.model.Converse(requests(), timeout=300))
        assert p.shutdown() == 0
    assert (replies[0].ready.input_rate, replies[0].ready.output_rate) == (16000, 24000)
    sizes = [len(r.frame.pcm) // 4 for r in replies[1:]]
    # The demo's 3 forced listening units, then the answer: tensors from the model arrive as
    # float32 samples.
    assert sizes[:3] == [0, 0, 0] and sizes[3] == 24000
