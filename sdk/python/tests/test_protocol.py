"""The duplexmpe.v1 protocol as the SDK serves it, in process over a real mTLS gRPC
socket: Describe/Configure mapping, and the model protocol's rules enforced like the Go
SDK does (errors with a status and a message, never a crash)."""

import json
import logging
import threading

import grpc
import numpy as np
import pytest

import duplexmpe_plugin as dp
from duplexmpe_plugin import testing
from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2, services_pb2
from duplexmpe_plugin.services import ProtocolError, check_info

FRAME = 160


class Echo(dp.Model):
    """Replies to frame i with the frame scaled by 0.5, text "i"; records closes."""

    name = "echo"
    version = "2.0.0"
    description = "echoes"
    capabilities = ("model.text",)
    config = (
        dp.ConfigField("gain", dp.TYPE_NUMBER, default=0.5, description="output gain"),
        dp.ConfigField("voice", dp.TYPE_STRING, required=True, allowed=("a", "b")),
        dp.ConfigField("tags", dp.TYPE_MAP_STRING, default={"k": "v"}),
        dp.ConfigField("url", dp.TYPE_STRING, default="ws://localhost:8998", transport=True),
    )

    def __init__(self, step=None, format=None):
        self.closed = []
        self.started = []
        self.config_seen = None
        self.step_fn = step
        self.format = format or dp.Format(8000, 16000, FRAME)

    def identity(self):
        return {"weights": "sha256:abc"} if self.config_seen is not None else {}

    def configure(self, config):
        if config.get("voice") not in ("a", "b"):
            raise ValueError(f"voice {config.get('voice')!r} is not a or b")
        if config.get("explode"):
            raise RuntimeError("configure exploded")
        self.config_seen = config

    def start(self, req):
        self.started.append(req)
        return EchoConversation(self)


class EchoConversation(dp.Conversation):
    def __init__(self, model):
        self.model = model
        self.format = model.format
        self.n = 0

    def step(self, frame):
        if self.model.step_fn:
            return self.model.step_fn(frame)
        assert frame.dtype == np.float32 and frame.shape == (FRAME,)
        frame *= 0.5  # the frame is the conversation's own copy
        self.n += 1
        return dp.Output(samples=frame, text=str(self.n - 1))

    def close(self):
        self.model.closed.append(self.n)


def start_msg(cid="c"):
    return model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id=cid, seed=3, instruction="be brief"))


def frame_msg(i, samples=None):
    if samples is None:
        samples = np.full(FRAME, i / 10, np.float32)
    return model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=np.asarray(samples, "<f4").tobytes()))


END = model_pb2.ModelInput(end=model_pb2.ConversationEnd())


def converse(conn, msgs):
    """Sends msgs, returns (replies, error or None)."""
    replies = []
    try:
        for out in conn.model.Converse(iter(msgs), timeout=10):
            replies.append(out)
    except grpc.RpcError as e:
        return replies, e
    return replies, None


def wait_closed(model, n=1):
    for _ in range(200):
        if len(model.closed) >= n:
            return
        threading.Event().wait(0.01)


def test_describe_maps_info_kinds_and_schema():
    with testing.in_process(Echo()) as conn:
        d = conn.plugin.Describe(plugin_pb2.DescribeRequest())
    assert (d.name, d.version, d.description, d.protocol_version) == ("echo", "2.0.0", "echoes", 1)
    assert list(d.kinds) == ["model"] and list(d.capabilities) == ["model.text"]
    fields = {f.name: f for f in d.config_schema}
    assert json.loads(fields["gain"].default_json) == 0.5 and fields["gain"].type == "number"
    assert fields["voice"].required and list(fields["voice"].allowed) == ["a", "b"]
    assert fields["voice"].default_json == ""  # no default
    assert json.loads(fields["tags"].default_json) == {"k": "v"}
    assert fields["url"].transport and not fields["gain"].transport
    assert dict(d.identity) == {}


def test_configure_passes_the_object_and_identity_follows():
    model = Echo()
    with testing.in_process(model) as conn:
        conn.plugin.Configure(plugin_pb2.ConfigureRequest(config_json='{"voice": "a", "gain": 1}'))
        assert model.config_seen == {"voice": "a", "gain": 1}
        assert dict(conn.plugin.Describe(plugin_pb2.DescribeRequest()).identity) == {"weights": "sha256:abc"}


@pytest.mark.parametrize("config_json,code,text", [
    ('{"voice": "z"}', grpc.StatusCode.INVALID_ARGUMENT, "voice 'z' is not a or b"),
    ('[1, 2]', grpc.StatusCode.INVALID_ARGUMENT, "must be a JSON object"),
    ('{"voice": ', grpc.StatusCode.INVALID_ARGUMENT, "not JSON"),
    ('{"voice": "a", "explode": true}', grpc.StatusCode.INTERNAL, "RuntimeError: configure exploded"),
])
def test_configure_errors(config_json, code, text, caplog):
    with testing.in_process(Echo()) as conn:
        with caplog.at_level(logging.ERROR, logger="duplexmpe_plugin"):
            with pytest.raises(grpc.RpcError) as e:
                conn.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=config_json))
    assert e.value.code() == code
    assert text in e.value.details() and e.value.details().startswith("plugin echo: Configure")
    if code == grpc.StatusCode.INTERNAL:
        # The traceback is in the log, not lost.
        assert any("configure exploded" in (r.exc_text or "") for r in caplog.records)


def test_conversation_round_trip():
    model = Echo()
    with testing.in_process(model) as conn:
        replies, err = converse(conn, [start_msg("c1")] + [frame_msg(i) for i in range(5)] + [END])
    assert err is None
    assert replies[0].WhichOneof("msg") == "ready"
    r = replies[0].ready
    assert (r.input_rate, r.output_rate, r.frame_size) == (8000, 16000, FRAME)
    assert [o.frame.index for o in replies[1:]] == [0, 1, 2, 3, 4]
    for i, o in enumerate(replies[1:]):
        assert o.frame.text == str(i)
        np.testing.assert_array_equal(np.frombuffer(o.frame.pcm, "<f4"), np.full(FRAME, np.float32(i / 10) * 0.5))
    assert model.started[0] == dp.ConversationStart(id="c1", seed=3, instruction="be brief")
    assert model.closed == [5]


@pytest.mark.parametrize("msgs,code,text", [
    ([frame_msg(0)], grpc.StatusCode.FAILED_PRECONDITION, "must be start, got frame 0"),
    ([END], grpc.StatusCode.FAILED_PRECONDITION, "must be start, got end"),
    ([model_pb2.ModelInput()], grpc.StatusCode.FAILED_PRECONDITION, "got an empty message"),
    ([start_msg(), start_msg()], grpc.StatusCode.FAILED_PRECONDITION, "second start"),
    ([start_msg(), frame_msg(1)], grpc.StatusCode.INVALID_ARGUMENT, "frame index 1, want 0"),
    ([start_msg(), frame_msg(0), frame_msg(0)], grpc.StatusCode.INVALID_ARGUMENT, "frame index 0, want 1"),
    ([start_msg(), frame_msg(0, np.zeros(FRAME - 1))], grpc.StatusCode.INVALID_ARGUMENT, "want 640 (160 float32 samples"),
    ([start_msg(), frame_msg(0, np.zeros(FRAME + 1))], grpc.StatusCode.INVALID_ARGUMENT, "has 644 bytes"),
    ([start_msg(), model_pb2.ModelInput()], grpc.StatusCode.INVALID_ARGUMENT, "empty ModelInput"),
])
def test_protocol_violations_are_refused(msgs, code, text):
    model = Echo()
    with testing.in_process(model) as conn:
        replies, err = converse(conn, msgs)
        assert err is not None, "the violation was accepted"
        assert err.code() == code and text in err.details(), err.details()
        # The process survives and serves the next conversation.
        replies, err2 = converse(conn, [start_msg(), frame_msg(0), END])
        assert err2 is None and len(replies) == 2
    # Every conversation that started was closed, the refused one too.
    assert len(model.closed) == len(model.started)


def bad_step(result):
    return lambda frame: result


@pytest.mark.parametrize("step,text", [
    (bad_step(None), "Conversation.step returned NoneType, want Output"),
    (bad_step(dp.Output(samples=np.zeros((2, 4)))), "must be a 1-D (mono) array, got shape (2, 4)"),
    (bad_step(dp.Output(samples=[0.1, float("nan")])), "NaN or infinity"),
    (bad_step(dp.Output(samples=["x"])), "samples are not numbers"),
])
def test_bad_step_results_are_internal_errors(step, text):
    model = Echo(step=step)
    with testing.in_process(model) as conn:
        _, err = converse(conn, [start_msg(), frame_msg(0), END])
    assert err.code() == grpc.StatusCode.INTERNAL and text in err.details(), err.details()
    assert model.closed == [0]


def test_exception_in_step_is_an_error_with_the_traceback_logged(caplog):
    def explode(frame):
        raise ZeroDivisionError("model diverged")

    model = Echo(step=explode)
    with testing.in_process(model) as conn:
        with caplog.at_level(logging.ERROR, logger="duplexmpe_plugin"):
            _, err = converse(conn, [start_msg(), frame_msg(0)])
    assert err.code() == grpc.StatusCode.INTERNAL
    assert "Converse frame 0: ZeroDivisionError: model diverged" in err.details()
    rec = [r for r in caplog.records if r.exc_info]
    assert rec and "explode" in rec[0].exc_text and rec[0].method == "Converse frame 0"
    assert model.closed == [0]


@pytest.mark.parametrize("exc,what", [
    (SystemExit(3), "sys.exit(3)"),
    (SystemExit(), "sys.exit(None)"),
    (KeyboardInterrupt(), "KeyboardInterrupt"),
])
def test_exit_in_step_is_an_error_reply_not_a_hang(exc, what, caplog):
    # SystemExit is not an Exception: before, it ended the gRPC worker thread and the
    # host waited for the reply until its frame deadline.
    def leave(frame):
        raise exc

    model = Echo(step=leave)
    with testing.in_process(model) as conn:
        with caplog.at_level(logging.ERROR, logger="duplexmpe_plugin"):
            _, err = converse(conn, [start_msg(), frame_msg(0)])
        assert err is not None and err.code() == grpc.StatusCode.INTERNAL
        assert f"Converse frame 0: the plugin's code raised {what}" in err.details(), err.details()
        # The process keeps serving.
        model.step_fn = None
        replies, err2 = converse(conn, [start_msg(), frame_msg(0), END])
        assert err2 is None and len(replies) == 2
    assert any(what in r.getMessage() and r.exc_info for r in caplog.records)


def test_exit_in_configure_and_start_is_an_error_reply():
    class Leaves(Echo):
        def configure(self, config):
            raise SystemExit("bad config")

        def start(self, req):
            raise SystemExit(1)

    with testing.in_process(Leaves()) as conn:
        with pytest.raises(grpc.RpcError) as e:
            conn.plugin.Configure(plugin_pb2.ConfigureRequest(config_json="{}"))
        assert e.value.code() == grpc.StatusCode.INTERNAL and "sys.exit('bad config')" in e.value.details()
        _, err = converse(conn, [start_msg()])
        assert err.code() == grpc.StatusCode.INTERNAL and "sys.exit(1)" in err.details()


def test_invalid_format_is_refused_at_start():
    model = Echo(format=dp.Format(16000, 0, FRAME))
    with testing.in_process(model) as conn:
        _, err = converse(conn, [start_msg()])
    assert err.code() == grpc.StatusCode.INTERNAL and "output_rate is 0" in err.details()


def test_host_going_away_closes_the_conversation():
    model = Echo()
    with testing.in_process(model) as conn:
        hold = threading.Event()

        def requests():
            yield start_msg()
            yield frame_msg(0)
            hold.wait(10)  # the stream stays open until the host cancels

        call = conn.model.Converse(requests(), timeout=10)
        assert next(call).WhichOneof("msg") == "ready"
        assert next(call).frame.index == 0
        assert model.closed == []
        call.cancel()
        hold.set()
        wait_closed(model)
    assert model.closed == [1]


class Big(dp.TTS, dp.ASR):
    name = "big"

    def voices(self):
        return []

    def synthesize(self, text, voice):
        if voice != "v":
            raise dp.InvalidArgument(f"unknown voice {voice!r}; voices: v")
        n = int(text)
        return dp.Audio(np.linspace(-1, 1, n, dtype=np.float32), 48000)

    def transcribe(self, audio, language):
        return f"{audio.samples.size} {audio.rate} {float(audio.samples.sum()):.1f} {language}"


def test_messages_beyond_4_mib_both_ways():
    n = 3_000_000  # 12 MB of float32, three times gRPC's default limit
    with testing.in_process(Big()) as conn:
        audio = conn.tts.Synthesize(services_pb2.SynthesizeRequest(text=str(n), voice="v"), timeout=30).audio
        samples = np.frombuffer(audio.pcm, "<f4")
        assert samples.size == n and samples[0] == -1 and samples[-1] == 1 and audio.sample_rate == 48000
        clip = plugin_pb2.Audio(pcm=np.ones(n, "<f4").tobytes(), sample_rate=16000)
        text = conn.asr.Transcribe(services_pb2.TranscribeRequest(audio=clip, language="en"), timeout=30).text
        assert text == f"{n} 16000 {float(n):.1f} en"


def test_kind_errors_keep_their_status():
    with testing.in_process(Big()) as conn:
        with pytest.raises(grpc.RpcError) as e:
            conn.tts.Synthesize(services_pb2.SynthesizeRequest(text="3", voice="x"))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "unknown voice 'x'" in e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            conn.asr.Transcribe(services_pb2.TranscribeRequest(audio=plugin_pb2.Audio(pcm=b"\0" * 8)))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "sample_rate is 0" in e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            conn.asr.Transcribe(services_pb2.TranscribeRequest(audio=plugin_pb2.Audio(pcm=b"\0" * 7, sample_rate=8000)))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "not a multiple of 4" in e.value.details()
        # A kind the plugin does not serve is not there at all.
        with pytest.raises(grpc.RpcError) as e:
            conn.llm.Complete(services_pb2.CompleteRequest())
        assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_llm_request_mapping():
    seen = []

    class Chat(dp.LLM):
        name = "chat"

        def complete(self, req):
            seen.append(req)
            return dp.Completion(content="{}", model="m", prompt_tokens=3, completion_tokens=1, finish_reason="stop")

    with testing.in_process(Chat()) as conn:
        msgs = [services_pb2.ChatMessage(role="system", content="s"), services_pb2.ChatMessage(role="user", content="u")]
        c = conn.llm.Complete(services_pb2.CompleteRequest(messages=msgs, max_tokens=9, json=True, seed=0))
        conn.llm.Complete(services_pb2.CompleteRequest(messages=msgs, temperature=0.0))
    assert (c.content, c.prompt_tokens, c.finish_reason) == ("{}", 3, "stop")
    a, b = seen
    assert [m.role for m in a.messages] == ["system", "user"]
    assert (a.temperature, a.max_tokens, a.json, a.seed) == (None, 9, True, 0)
    assert (b.temperature, b.seed) == (0.0, None)


@pytest.mark.parametrize("info,text", [
    (dp.Info(name="", version="1"), "no name"),
    (dp.Info(name="x", version="1", config=(dp.ConfigField("a", "float"),)), "type 'float'"),
    (dp.Info(name="x", version="1", config=(dp.ConfigField("a", "number", allowed=("1",)),)), "only apply to string"),
    (dp.Info(name="x", version="1", config=(dp.ConfigField("a", "number"), dp.ConfigField("a", "bool"))), "twice"),
    (dp.Info(name="x", version="1", config=(dp.ConfigField("a", "number", default=float("nan")),)), "not JSON"),
    (dp.Info(name="x", version="1", identity={"a": 1}), "strings to strings"),
])
def test_check_info_rejects_bad_descriptions(info, text):
    with pytest.raises(ProtocolError, match=text):
        check_info(info)


def test_a_plugin_must_implement_a_kind():
    class Nothing(dp.Plugin):
        name = "nothing"

    with pytest.raises(TypeError, match="implements no kind"):
        dp.server.PluginServer(Nothing())


def test_a_dataclass_conversation_works():
    import dataclasses

    @dataclasses.dataclass
    class Counting(dp.Conversation):
        format: dp.Format = dp.Format(16000, 16000, FRAME)
        n: int = 0

        def step(self, frame):
            self.n += 1
            return dp.Output(text=str(self.n))

    class M(dp.Model):
        name = "dc"

        def start(self, req):
            return Counting()

    with testing.in_process(M()) as conn:
        replies, err = converse(conn, [start_msg(), frame_msg(0), frame_msg(1), END])
    assert err is None and [r.frame.text for r in replies[1:]] == ["1", "2"]


def test_conversations_run_concurrently_and_stay_separate():
    model = Echo()
    results = {}

    def run(cid, level):
        msgs = [start_msg(cid)] + [frame_msg(i, np.full(FRAME, level, np.float32)) for i in range(20)] + [END]
        replies, err = converse(conn, msgs)
        results[cid] = (err, [np.frombuffer(r.frame.pcm, "<f4")[0] for r in replies[1:]])

    with testing.in_process(model) as conn:
        threads = [threading.Thread(target=run, args=(f"c{k}", k / 10)) for k in range(1, 7)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert len(results) == 6
    for k in range(1, 7):
        err, firsts = results[f"c{k}"]
        assert err is None
        assert firsts == [np.float32(k / 10) * np.float32(0.5)] * 20
    assert sorted(model.closed) == [20] * 6
