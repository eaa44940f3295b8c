"""The adapter against Freeze-Omni's own server pipeline, chunk for chunk, on a tiny random
checkpoint (tiny_freezeomni.py).

bin/server.py itself is imported (its Flask app is never served) and driven as a client
would drive it: each 160 ms chunk goes into the user's PCM queue, the server's send_pcm
loop runs web/vad.py's VAD and llm_prefill on it, generate() and decoder() answer on 'ss'
and queue int16 TTS segments, which the test drains as the client's audio events would.
Two things differ from a live server, both the adapter's documented model of it: the
queue hands send_pcm one chunk at a time and waits until it asks for the next, and the
generate thread runs to its end when started (threading.Thread replaced by a synchronous
one in the server module only), so the result depends on the chunk index only.
The adapter, configured with the same checkpoint and seed, must queue the same audio in
the same chunk (as int16, the server's own conversion), say the same text, and end in
the same dialogue state.
"""

import ast
import builtins
import importlib.util
import sys
import threading

import numpy as np
import pytest

import shipped

torch = pytest.importorskip("torch")


class LockstepQueue:
    """web/queue.PCMQueue's get(length), one offered chunk at a time."""

    def __init__(self):
        self.cond = threading.Condition()
        self.chunks, self.waiting, self.stopped = [], False, False

    def get(self, length):
        with self.cond:
            self.waiting = True
            self.cond.notify_all()
            while not self.chunks and not self.stopped:
                self.cond.wait()
            self.waiting = False
            if self.stopped:
                return None
            chunk = self.chunks.pop(0)
            assert len(chunk) == length
            return chunk

    def offer(self, chunk):
        with self.cond:
            self.chunks.append(chunk)
            self.cond.notify_all()

    def wait_idle(self):
        with self.cond:
            while self.chunks or not self.waiting:
                self.cond.wait()

    def stop(self):
        with self.cond:
            self.stopped = True
            self.cond.notify_all()


class SynchronousThread:
    """Runs the target when started: generate() finishes inside the chunk that said 'ss'."""

    def __init__(self, target, args=(), kwargs=None):
        self.target, self.args, self.kwargs = target, args, kwargs or {}

    def start(self):
        self.target(*self.args, **self.kwargs)


def import_server(upstream, tiny):
    argv, printer = sys.argv, builtins.print
    sys.argv = ["server.py", "--model_path", tiny["model_path"], "--llm_path", tiny["llm_path"], "--ip", "127.0.0.1",
                "--port", "0", "--max_users", "1", "--llm_exec_nums", "1"]
    try:
        spec = importlib.util.spec_from_file_location("freeze_omni_server", upstream / "bin" / "server.py")
        server = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(server)
    finally:
        sys.argv, builtins.print = argv, printer  # the server replaces print with a timestamped one
    server.threading = type("threading", (), {"Thread": SynchronousThread})
    return server


def server_conversation(server, chunks, seed):
    """Per chunk: the int16 segments the server queued, and its whole_text."""
    from web.parms import GlobalParams

    sid = "test"
    user = GlobalParams(server.tts_pool, server.pipeline_pool)
    server.connected_users[sid] = [None, user]
    queue = LockstepQueue()
    user.pcm_fifo_queue = queue
    torch.manual_seed(seed)
    np.random.seed(seed)
    loop = threading.Thread(target=server.send_pcm, args=(sid,))
    loop.start()
    out = []
    try:
        for chunk in chunks:
            queue.offer(chunk)
            queue.wait_idle()
            segments = []
            while not user.tts_data.is_empty():
                segments.append(user.tts_data.get())
            out.append((segments, user.whole_text))
    finally:
        user.stop_pcm = True
        queue.stop()
        loop.join(60)
    return out, user


def test_the_default_role_is_the_servers(upstream):
    """The adapter's default role is GlobalParams' inline role, line-continuation spaces
    included."""
    import freeze_omni_adapter as fa

    tree = ast.parse((upstream / "web" / "parms.py").read_text())
    role = next(k.value.value for n in ast.walk(tree) if isinstance(n, ast.Call)
                for k in n.keywords if k.arg == "role" and isinstance(k.value, ast.Constant))
    assert fa.DEFAULT_ROLE == role


def test_the_adapter_is_the_server_pipeline(upstream, tiny):
    import freeze_omni_adapter as fa
    import tiny_freezeomni

    tiny_freezeomni.cuda_on_cpu()
    audio, rate = shipped.speech(range(3), gap_s=2.5)  # pauses long enough for the VAD to end and restart
    audio = np.concatenate([audio, np.zeros(3 * rate, np.float32)])
    audio = np.concatenate([audio, np.zeros(-len(audio) % fa.FRAME_SIZE, np.float32)])
    chunks = list(audio.reshape(-1, fa.FRAME_SIZE))
    seed = 5

    server = import_server(upstream, tiny)
    theirs, user = server_conversation(server, chunks, seed)

    a = fa.FreezeOmniAdapter()
    a.configure(tiny)
    conv = a.start("c", seed=seed)
    ours = [conv.step(c) for c in chunks]

    answers = 0
    for i, ((segments, whole_text), out) in enumerate(zip(theirs, ours)):
        want = np.concatenate(segments) if segments else np.zeros(0, np.int16)
        got = (out.samples * 32768).astype(np.int16)
        assert np.array_equal(got, want), f"chunk {i}: {got.size} samples, the server queued {want.size}"
        if segments:
            answers += 1
            assert out.text == whole_text, f"chunk {i}"
    assert answers >= 2, "the tiny model must answer at least twice (a barge-in) for this to prove much"
    assert any(o.flush for o in ours), "a second answer interrupts the first, as the server's stop_tts does"
    assert conv.generate_outputs["stat"] == user.generate_outputs["stat"]
    assert conv.generate_outputs.get("past_tokens") == user.generate_outputs.get("past_tokens")
