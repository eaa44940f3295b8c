"""gRPC servicers that translate between the duplexmpe.v1 protocol and plugin code,
and enforce the protocol the way the Go SDK does: bad requests are answered with
INVALID_ARGUMENT or FAILED_PRECONDITION and a message saying what to do, and an
exception in plugin code becomes an error status with its traceback logged, never a
crash of the process."""

from __future__ import annotations

import json
import logging
import math
import threading
from typing import Any, Callable, NoReturn, Sequence, TypeVar

import grpc
import numpy as np

from . import api, errors
from ._proto.duplexmpe.v1 import model_pb2, model_pb2_grpc, plugin_pb2, plugin_pb2_grpc
from ._proto.duplexmpe.v1 import services_pb2, services_pb2_grpc
from .handshake import PROTOCOL_VERSION
from .types import (
    CONFIG_TYPES,
    AnswerQuery,
    Audio,
    ChatMessage,
    Completion,
    CompletionRequest,
    ConversationStart,
    DialogueTurn,
    Format,
    Info,
    Output,
    SpeechQuery,
    Verdict,
)

log = logging.getLogger("duplexmpe_plugin")

T = TypeVar("T")


class ProtocolError(Exception):
    """Plugin code returned something the protocol cannot carry (a plugin bug)."""


# ---- audio ----------------------------------------------------------------------

def pcm_to_samples(pcm: bytes) -> np.ndarray:
    """float32 little-endian bytes to a writable float32 array (one copy)."""
    if len(pcm) % 4:
        raise errors.InvalidArgument(f"pcm has {len(pcm)} bytes, not a multiple of 4 (float32 little-endian samples)")
    return np.frombuffer(pcm, dtype="<f4").astype(np.float32)


def samples_to_pcm(samples: Any, what: str) -> bytes:
    """Any 1-D array-like of finite numbers to float32 little-endian bytes."""
    if samples is None:
        return b""
    try:
        a = np.asarray(samples, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise ProtocolError(f"{what}: samples are not numbers: {e}") from None
    if a.ndim != 1:
        raise ProtocolError(f"{what}: samples must be a 1-D (mono) array, got shape {a.shape}")
    if a.size and not np.isfinite(a).all():
        raise ProtocolError(f"{what}: samples contain NaN or infinity")
    return a.astype("<f4", copy=False).tobytes()


# ---- config schema ----------------------------------------------------------------

def check_info(info: Info) -> None:
    """Raises ProtocolError when a plugin's description cannot be served."""
    if not isinstance(info, Info):
        raise ProtocolError(f"describe() returned {type(info).__name__}, want duplexmpe_plugin.Info")
    if not info.name:
        raise ProtocolError("the plugin has no name: set the class attribute name (or describe().name)")
    seen = set()
    for f in info.config:
        if f.name in seen:
            raise ProtocolError(f"config field {f.name!r} is declared twice")
        seen.add(f.name)
        if f.type not in CONFIG_TYPES:
            raise ProtocolError(f"config field {f.name!r} has type {f.type!r}; want one of {', '.join(CONFIG_TYPES)}")
        if f.allowed and f.type != "string":
            raise ProtocolError(f"config field {f.name!r}: allowed values only apply to string fields")
        try:
            json.dumps(f.default, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ProtocolError(f"config field {f.name!r}: default is not JSON: {e}") from None
    for k, v in info.identity.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ProtocolError(f"identity must map strings to strings; {k!r}: {v!r} is not")


def info_to_proto(info: Info, kinds: Sequence[str]) -> plugin_pb2.DescribeResponse:
    check_info(info)
    resp = plugin_pb2.DescribeResponse(
        name=info.name,
        version=info.version,
        description=info.description,
        kinds=list(kinds),
        protocol_version=PROTOCOL_VERSION,
        capabilities=list(info.capabilities),
        identity=dict(info.identity),
    )
    for f in info.config:
        resp.config_schema.add(
            name=f.name,
            type=f.type,
            required=f.required,
            default_json="" if f.default is None else json.dumps(f.default, allow_nan=False),
            description=f.description,
            allowed=list(f.allowed),
            transport=f.transport,
        )
    return resp


def parse_config(config_json: str) -> dict[str, Any]:
    if not config_json.strip():
        return {}
    try:
        config = json.loads(config_json)
    except json.JSONDecodeError as e:
        raise errors.InvalidArgument(f"config_json is not JSON: {e}") from None
    except RecursionError:
        raise errors.InvalidArgument("config_json is nested too deeply") from None
    if not isinstance(config, dict):
        raise errors.InvalidArgument(f"config_json must be a JSON object, got {type(config).__name__}")
    return config


# ---- calling plugin code ------------------------------------------------------------

class Calls:
    """Runs plugin code for one RPC and turns failures into gRPC statuses."""

    def __init__(self, plugin_name: str):
        self.plugin_name = plugin_name

    def abort(self, context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
        context.abort(code, f"plugin {self.plugin_name}: {message}")
        raise AssertionError("unreachable")  # context.abort raises

    def run(self, context: grpc.ServicerContext, method: str, fn: Callable[..., T], *args: Any,
            invalid: tuple[type[BaseException], ...] = ()) -> T:
        """Calls fn(*args). PluginError keeps its code; exception types in ``invalid``
        become INVALID_ARGUMENT; ProtocolError and anything else become INTERNAL, with
        the traceback logged."""
        try:
            return fn(*args)
        except errors.PluginError as e:
            code, message = e.code, f"{method}: {e}"
        except invalid as e:
            code, message = grpc.StatusCode.INVALID_ARGUMENT, f"{method}: {e}"
        except ProtocolError as e:
            log.error("plugin code broke the protocol", extra={"method": method, "error": str(e)})
            code, message = grpc.StatusCode.INTERNAL, f"{method}: {e}"
        except Exception as e:
            log.error("plugin code raised an exception", exc_info=True, extra={"method": method})
            code, message = grpc.StatusCode.INTERNAL, f"{method}: {type(e).__name__}: {e} (traceback in the plugin log)"
        except (SystemExit, KeyboardInterrupt) as e:
            # In a worker thread these would end only the thread and leave the call
            # unanswered until the host's deadline; the process keeps serving instead.
            what = f"sys.exit({e.code!r})" if isinstance(e, SystemExit) else "KeyboardInterrupt"
            log.error(f"plugin code raised {what}; the call fails, the plugin keeps serving", exc_info=True,
                      extra={"method": method})
            code, message = grpc.StatusCode.INTERNAL, (
                f"{method}: the plugin's code raised {what} (traceback in the plugin log); "
                "a plugin reports a failure by raising an exception, never by exiting")
        self.abort(context, code, message)


def _expect(value: Any, cls: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, cls):
        want = cls.__name__ if isinstance(cls, type) else " or ".join(c.__name__ for c in cls)
        raise ProtocolError(f"{what} returned {type(value).__name__}, want {want}")
    return value


# ---- Plugin -------------------------------------------------------------------------

class PluginServicer(plugin_pb2_grpc.PluginServicer):
    def __init__(self, plugin: api.Plugin, calls: Calls):
        self.plugin = plugin
        self.calls = calls
        self.kinds = api.kinds_of(plugin)

    def Describe(self, request, context):
        def describe():
            return info_to_proto(self.plugin.describe(), self.kinds)
        return self.calls.run(context, "Describe", describe)

    def Configure(self, request, context):
        def configure():
            config = parse_config(request.config_json)
            self.plugin.configure(config)
            return plugin_pb2.ConfigureResponse()
        return self.calls.run(context, "Configure", configure, invalid=(ValueError, TypeError, KeyError))


# ---- Model --------------------------------------------------------------------------

def check_format(fmt: Any) -> Format:
    _expect(fmt, Format, "Conversation.format")
    for field in ("input_rate", "output_rate", "frame_size"):
        v = getattr(fmt, field)
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v <= 0 or v > 0xFFFFFFFF:
            raise ProtocolError(f"Conversation.format.{field} is {v!r}, want a positive integer")
    return fmt


class ModelServicer(model_pb2_grpc.ModelServicer):
    """One Converse stream is one conversation: start, then frames 0, 1, 2, ... each
    answered with exactly one reply of the same index, then end."""

    def __init__(self, plugin: api.Model, calls: Calls):
        self.plugin = plugin
        self.calls = calls
        # Keyed by id(): a Conversation may be an unhashable dataclass.
        self._open: dict[int, api.Conversation] = {}
        self._lock = threading.Lock()

    def open_conversations(self) -> int:
        with self._lock:
            return len(self._open)

    def Converse(self, request_iterator, context):
        calls = self.calls
        conv: api.Conversation | None = None
        frame_size = 0
        next_index = 0
        try:
            for msg in request_iterator:
                which = msg.WhichOneof("msg")
                if conv is None and which != "start":
                    got = f"frame {msg.frame.index}" if which == "frame" else (which or "an empty message")
                    calls.abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                                f"Converse: the first message of a conversation must be start, got {got}; "
                                "send ConversationStart first")
                if which == "start":
                    if conv is not None:
                        calls.abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                                    "Converse: a second start in one stream; open a new Converse stream per conversation")
                    req = ConversationStart(id=msg.start.conversation_id, seed=msg.start.seed,
                                            instruction=msg.start.instruction)

                    def start(req=req):
                        c = _expect(self.plugin.start(req), api.Conversation, "Model.start")
                        return c, check_format(getattr(c, "format", None))

                    conv, fmt = calls.run(context, "Converse start", start)
                    with self._lock:
                        self._open[id(conv)] = conv
                    frame_size = int(fmt.frame_size)
                    log.debug("conversation started", extra={"conversation": req.id, "input_rate": int(fmt.input_rate),
                                                             "output_rate": int(fmt.output_rate), "frame_size": frame_size})
                    yield model_pb2.ModelOutput(ready=model_pb2.ModelReady(
                        input_rate=int(fmt.input_rate), output_rate=int(fmt.output_rate), frame_size=frame_size))
                elif which == "frame":
                    index = msg.frame.index
                    if index != next_index:
                        calls.abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                                    f"Converse: frame index {index}, want {next_index}; frames go in order, one reply each")
                    pcm = msg.frame.pcm
                    if len(pcm) != 4 * frame_size:
                        calls.abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                                    f"Converse: frame {index} has {len(pcm)} bytes, want {4 * frame_size} "
                                    f"({frame_size} float32 samples, the frame size in ModelReady)")
                    frame = pcm_to_samples(pcm)

                    def step(conv=conv, frame=frame, index=index):
                        out = _expect(conv.step(frame), Output, "Conversation.step")
                        return model_pb2.OutputFrame(
                            index=index,
                            pcm=samples_to_pcm(out.samples, f"Conversation.step (frame {index})"),
                            text=_expect(out.text or "", str, "Output.text"),
                            flush=bool(out.flush),
                        )

                    reply = calls.run(context, f"Converse frame {index}", step)
                    next_index += 1
                    yield model_pb2.ModelOutput(frame=reply)
                elif which == "end":
                    c, conv = conv, None
                    self._close(c)
                    calls.run(context, "Converse end", c.close)
                    log.debug("conversation ended", extra={"frames": next_index})
                    return
                else:
                    calls.abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                                "Converse: empty ModelInput; set start, frame or end")
        finally:
            if conv is not None:
                # The host went away, cancelled, or a call failed: still release the model.
                self._close(conv)
                try:
                    conv.close()
                except BaseException:
                    log.error("Conversation.close raised", exc_info=True)

    def _close(self, conv: api.Conversation) -> None:
        with self._lock:
            self._open.pop(id(conv), None)


# ---- TTS, ASR, Judge, LLM -------------------------------------------------------

def audio_to_proto(audio: Any, what: str) -> plugin_pb2.Audio:
    _expect(audio, Audio, what)
    if not isinstance(audio.rate, (int, np.integer)) or isinstance(audio.rate, bool) or not 0 < audio.rate <= 0xFFFFFFFF:
        raise ProtocolError(f"{what}: Audio.rate is {audio.rate!r}, want a positive integer (Hz)")
    return plugin_pb2.Audio(pcm=samples_to_pcm(audio.samples, what), sample_rate=int(audio.rate))


def audio_from_proto(a: plugin_pb2.Audio) -> Audio:
    if a.sample_rate == 0:
        raise errors.InvalidArgument("audio.sample_rate is 0; set the clip's rate in Hz")
    return Audio(samples=pcm_to_samples(a.pcm), rate=int(a.sample_rate))


class TTSServicer(services_pb2_grpc.TTSServicer):
    def __init__(self, plugin: api.TTS, calls: Calls):
        self.plugin, self.calls = plugin, calls

    def ListVoices(self, request, context):
        def voices():
            resp = services_pb2.ListVoicesResponse()
            for v in self.plugin.voices():
                resp.voices.add(id=v.id, description=v.description, sample_rate=int(v.rate))
            return resp
        return self.calls.run(context, "ListVoices", voices)

    def Synthesize(self, request, context):
        def synthesize():
            audio = self.plugin.synthesize(request.text, request.voice)
            return services_pb2.SynthesizeResponse(audio=audio_to_proto(audio, "TTS.synthesize"))
        return self.calls.run(context, "Synthesize", synthesize)


class ASRServicer(services_pb2_grpc.ASRServicer):
    def __init__(self, plugin: api.ASR, calls: Calls):
        self.plugin, self.calls = plugin, calls

    def Transcribe(self, request, context):
        def transcribe():
            audio = audio_from_proto(request.audio)
            text = _expect(self.plugin.transcribe(audio, request.language), str, "ASR.transcribe")
            return services_pb2.TranscribeResponse(text=text)
        return self.calls.run(context, "Transcribe", transcribe)


def _turns(context) -> list[DialogueTurn]:
    return [DialogueTurn(speaker=t.speaker, text=t.text) for t in context]


def _verdict(v: Any, what: str) -> services_pb2.Verdict:
    _expect(v, Verdict, what)
    return services_pb2.Verdict(label=v.label, parsed=bool(v.parsed), raw=v.raw, rationale=v.rationale)


class JudgeServicer(services_pb2_grpc.JudgeServicer):
    def __init__(self, plugin: api.Judge, calls: Calls):
        self.plugin, self.calls = plugin, calls

    def JudgeAnswer(self, request, context):
        def judge():
            q = AnswerQuery(context=_turns(request.context), request=request.request,
                            gold_answer=request.gold_answer, response=request.response,
                            gold_accepted=tuple(request.gold_accepted),
                            answer_type=request.answer_type)
            return _verdict(self.plugin.judge_answer(q), "Judge.judge_answer")
        return self.calls.run(context, "JudgeAnswer", judge)

    def ClassifySpeech(self, request, context):
        def classify():
            q = SpeechQuery(context=_turns(request.context), transcript=request.transcript)
            return _verdict(self.plugin.classify_speech(q), "Judge.classify_speech")
        return self.calls.run(context, "ClassifySpeech", classify)


class LLMServicer(services_pb2_grpc.LLMServicer):
    def __init__(self, plugin: api.LLM, calls: Calls):
        self.plugin, self.calls = plugin, calls

    def Complete(self, request, context):
        def complete():
            temperature = request.temperature if request.HasField("temperature") else None
            if temperature is not None and not math.isfinite(temperature):
                raise errors.InvalidArgument(f"temperature {temperature} is not finite")
            req = CompletionRequest(
                messages=[ChatMessage(role=m.role, content=m.content) for m in request.messages],
                temperature=temperature,
                max_tokens=int(request.max_tokens),
                json=request.json,
                seed=request.seed if request.HasField("seed") else None,
            )
            c = self.plugin.complete(req)
            _expect(c, Completion, "LLM.complete")
            return services_pb2.CompleteResponse(
                content=c.content, model=c.model, prompt_tokens=int(c.prompt_tokens),
                completion_tokens=int(c.completion_tokens), finish_reason=c.finish_reason)
        return self.calls.run(context, "Complete", complete)
