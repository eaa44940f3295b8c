"""Step equivalence with Kyutai's own server: the adapter's per-frame loop gives, token for
token, what moshi/server.py's recv_loop gives for the same audio on the same weights.

The real `moshi.server` (moshi 0.2.13 from PyPI) runs in its own process on the tiny
random checkpoint (moshi_server_tee.py records what it decoded, its LMGen.step codes and
tokens, and the PCM it sent). A client speaks flite speech to it over /api/chat in Ogg/Opus
as the web client does. The adapter then steps the exact PCM frames the server decoded
(Opus is lossy; the comparison is of the model loop, not the codec), loaded by its official
loader from the same checkpoint, with the dtype the server uses (bfloat16) and the server's
random state at the connection. Every step's codes, tokens, decoded PCM and text must be
equal."""

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("moshi")
aiohttp = pytest.importorskip("aiohttp")
sphn = pytest.importorskip("sphn")

import moshi_adapter as ma  # noqa: E402

HERE = Path(__file__).resolve().parent
SEED = 7
TEXT = ("Aria, could you tell us when the meeting starts? We thought it was at nine, "
        "but nobody wrote it down, so please answer when you are asked.")


def flite_speech(tmp: Path) -> np.ndarray:
    if not shutil.which("flite"):
        pytest.skip("flite is not installed (scripts/install-apt.sh installs it)")
    wav = tmp / "speech.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", TEXT, "-o", str(wav)], check=True, capture_output=True)
    with wave.open(str(wav)) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
        rate = w.getframerate()
    n = int(len(x) * ma.SAMPLE_RATE / rate)
    x = np.interp(np.arange(n) * rate / ma.SAMPLE_RATE, np.arange(len(x)), x).astype(np.float32)
    x = np.concatenate([x, np.zeros(ma.SAMPLE_RATE, np.float32)])  # 1 s to hear the end
    return x[: len(x) // ma.FRAME_SIZE * ma.FRAME_SIZE]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tmp: Path, port: int) -> subprocess.Popen:
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, str(HERE / "moshi_server_tee.py"), "--hub", str(tmp / "hub"),
                             "--tee", str(tmp / "tee"), "--port", str(port), "--seed", str(SEED)],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"moshi.server exited ({proc.returncode}):\n{(tmp / 'server.log').read_text()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    pytest.fail(f"moshi.server did not listen within 300 s:\n{(tmp / 'server.log').read_text()[-3000:]}")


async def speak(port: int, pcm: np.ndarray, tee: Path) -> str:
    """Plays pcm to the server in 80 ms frames of Ogg/Opus; returns the text it sent back
    once it has stepped every frame."""
    frames = len(pcm) // ma.FRAME_SIZE
    text = []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"ws://127.0.0.1:{port}/api/chat", max_msg_size=0) as ws:
            hello = await ws.receive()
            assert hello.data == b"\x00"

            async def receive():
                async for msg in ws:
                    if msg.type == aiohttp.WSMsgType.BINARY and msg.data[:1] == b"\x02":
                        text.append(msg.data[1:].decode())

            reader = asyncio.create_task(receive())
            writer = sphn.OpusStreamWriter(ma.SAMPLE_RATE)
            for k in range(frames):
                await ws.send_bytes(b"\x01" + writer.append_pcm(pcm[k * ma.FRAME_SIZE:(k + 1) * ma.FRAME_SIZE]))
            tokens = tee / "conn-1" / "tokens.i64"
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                if tokens.exists() and tokens.stat().st_size >= frames * 9 * 8:
                    break
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)  # the last text pieces
            await ws.close()
            reader.cancel()
    return "".join(text)


def test_adapter_steps_like_the_server(tmp_path, monkeypatch):
    pcm = flite_speech(tmp_path)
    port = free_port()
    server = start_server(tmp_path, port)
    try:
        server_text = asyncio.run(speak(port, pcm, tmp_path / "tee"))
    finally:
        server.terminate()
        server.wait(30)
    conn = tmp_path / "tee" / "conn-1"
    heard = np.fromfile(conn / "input.f32", "<f4")
    steps = len(heard) // ma.FRAME_SIZE
    assert steps == len(pcm) // ma.FRAME_SIZE  # the server decoded every frame we sent
    want_codes = np.fromfile(conn / "codes.i64", "<i8").reshape(-1, 8)
    want_tokens = np.fromfile(conn / "tokens.i64", "<i8").reshape(-1, 9)
    want_pcm = np.fromfile(conn / "output.f32", "<f4")
    assert len(want_tokens) == steps and len(want_pcm) == (steps - 1) * ma.FRAME_SIZE

    # The adapter, in this process, on the same checkpoint, loaded by its official loader.
    import huggingface_hub.constants as hf

    monkeypatch.setattr(hf, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(hf, "HF_HUB_OFFLINE", True)
    torch.set_num_threads(1)  # as the server process: same reduction order, same floats
    from moshi.models import lm as moshi_lm

    got_codes, got_tokens = [], []
    real_step = moshi_lm.LMGen.step

    def step(self, input_tokens, *a, **k):
        out = real_step(self, input_tokens, *a, **k)
        got_codes.append(input_tokens.reshape(-1).tolist())
        got_tokens.append(out.reshape(-1).tolist() if out is not None else [-1] * 9)
        return out

    monkeypatch.setattr(moshi_lm.LMGen, "step", step)
    adapter = ma.MoshiAdapter()
    adapter.configure({"hf_repo": "tiny/moshi-random", "device": "cpu", "dtype": "bfloat16"})
    conv = adapter.start("eq", seed=SEED)
    outs = [conv.step(heard[k * ma.FRAME_SIZE:(k + 1) * ma.FRAME_SIZE]) for k in range(steps)]
    conv.close()

    np.testing.assert_array_equal(np.array(got_codes), want_codes)
    np.testing.assert_array_equal(np.array(got_tokens), want_tokens)
    assert (want_tokens[1:, 0] > 3).any(), "the server's text tokens are all padding: nothing compared"
    np.testing.assert_array_equal(np.concatenate([o.samples for o in outs]), want_pcm)
    assert server_text and "".join(o.text for o in outs) == server_text
