"""The moshi adapter's official loader (CheckpointInfo.from_hf_repo, get_mimi, get_moshi,
get_text_tokenizer) on the real moshi library, reading a tiny random checkpoint from a
Hugging Face cache written on the spot, offline, through the plugin process."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("moshi")

import tiny_moshi  # noqa: E402

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_official_loader_offline(tmp_path):
    from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
    from duplexmpe_plugin.testing import launch

    tiny_moshi.write_hf_cache(tmp_path / "hub", commit=COMMIT, lm_gen_config={"temp": 0.6, "top_k_text": 5})
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1", "NO_TORCH_COMPILE": "1"}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR), timeout=120) as p:
        config = {"hf_repo": "tiny/moshi-random", "device": "cpu", "dtype": "float32", "top_k_text": 7}
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=json.dumps(config)), timeout=300)
        ident = p.plugin.Describe(plugin_pb2.DescribeRequest()).identity
        assert ident["checkpoint"] == "tiny/moshi-random"
        assert ident["revision"] == COMMIT  # read from the snapshot path the weights came from
        assert ident["moshi_weights"] == "model.safetensors" and ident["mimi_weights"] == "mimi.safetensors"
        assert ident["library"] == "moshi 0.2.13"
        # Library defaults < the checkpoint's lm_gen_config < the run file.
        sampling = json.loads(ident["sampling"])
        assert sampling == {"temp": 0.6, "temp_text": 0.7, "top_k": 250, "top_k_text": 7}

        def requests():
            yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=1))
            for i in range(4):
                pcm = (0.1 * np.random.default_rng(i).standard_normal(1920)).astype("<f4").tobytes()
                yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=pcm))
            yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())

        replies = list(p.model.Converse(requests(), timeout=300))
        assert p.shutdown() == 0
    assert [len(r.frame.pcm) // 4 for r in replies[1:]] == [0, 1920, 1920, 1920]


def test_missing_checkpoint_fails_configure_with_the_repo_name(tmp_path):
    import grpc
    from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2
    from duplexmpe_plugin.testing import launch

    env = {"HF_HUB_CACHE": str(tmp_path / "empty"), "HF_HUB_OFFLINE": "1"}
    with launch([sys.executable, str(PLUGIN_DIR / "plugin.py")], env=env, cwd=str(PLUGIN_DIR), timeout=120) as p:
        with pytest.raises(grpc.RpcError) as e:
            p.plugin.Configure(plugin_pb2.ConfigureRequest(
                config_json=json.dumps({"hf_repo": "nobody/nothing", "device": "cpu"})), timeout=300)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "hf_repo: cannot load 'nobody/nothing'" in e.value.details()
        p.shutdown()
