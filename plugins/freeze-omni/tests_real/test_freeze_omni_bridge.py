"""TorchBridge (the torch side of the freeze-omni adapter: bin/server.py decoder()'s TTS
call) on CPU torch, against a torch stand-in of the pipeline and llm2TTS interfaces.
Freeze-Omni itself needs CUDA and a 7 B LLM. Run by `make test-adapters`."""

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "_common")]
import freeze_omni_adapter as fo  # noqa: E402

SERVER_JSON = {"decoder_top_k": 2, "decoder_first_chunk_size": 20, "decoder_chunk_size": 40,
               "decoder_chunk_overlap_size": 10, "decoder_penalty_window_size": 20, "decoder_penalty": 1.1,
               "decoder_N": 2401, "decoder_seg_threshold_first_pack": 0.1, "decoder_seg_threshold": 0.015}


class TTS:
    def __init__(self):
        self.calls = []

    def run(self, embeddings, top_k, hidden, chunk, overlap, window, penalty, n, threshold):
        self.calls.append(dict(embeddings=embeddings.shape, top_k=top_k, hidden=hidden.shape, chunk=chunk,
                               overlap=overlap, window=window, penalty=penalty, n=n, threshold=threshold))
        for i in range(2):
            yield torch.full((1, 1, 480), 0.1 * (i + 1), dtype=torch.bfloat16)


def runtime():
    embed = torch.nn.Embedding(100, 896)
    tokenizer = SimpleNamespace(encode=lambda text: [ord(c) % 100 for c in text])
    model = SimpleNamespace(tokenizer=tokenizer, llm_decoder=SimpleNamespace(model=SimpleNamespace(embed_tokens=embed)))
    pipeline = SimpleNamespace(model=model, post_process=lambda t: t.strip())
    return {"pipeline": pipeline, "tts": TTS()}


def test_synthesize_passes_server_json_and_shapes():
    rt = runtime()
    bridge = fo.TorchBridge(SERVER_JSON, device="cpu")
    hidden = [torch.randn(1, 1, 896) for _ in range(5)]
    with bridge.no_grad():
        first = bridge.synthesize(rt, hidden, " Hello there. ", 0)
        later = bridge.synthesize(rt, hidden[:2], "More.", 3)
    assert [s.dtype for s in first] == [np.float32, np.float32] and first[0].shape == (480,)
    np.testing.assert_allclose(first[1], 0.2, atol=1e-3)
    c0, c1 = rt["tts"].calls
    assert c0["embeddings"] == (1, len("Hello there."), 896) and c0["hidden"] == (1, 5, 896)
    assert (c0["chunk"], c0["threshold"]) == (20, 0.1)  # the first pack of an answer
    assert (c1["chunk"], c1["threshold"], c1["hidden"]) == (40, 0.015, (1, 2, 896))
    assert (c0["top_k"], c0["overlap"], c0["window"], c0["penalty"], c0["n"]) == (2, 10, 20, 1.1, 2401)


def test_feature_and_seed():
    bridge = fo.TorchBridge(SERVER_JSON, device="cpu")
    assert bridge.feature([[[0.5, 1.0]]]).shape == (1, 1, 2)
    bridge.seed(3)
    a = torch.rand(3)
    bridge.seed(3)
    assert torch.equal(a, torch.rand(3))
