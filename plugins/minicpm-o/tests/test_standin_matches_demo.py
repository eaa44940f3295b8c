"""The MiniCPM-o stand-in (plugins/_standins/standin_minicpmo.py) and the adapter, checked
point by point against OpenBMB/MiniCPM-o-Demo, whose modeling code cannot be shipped here.

DEMO below carries the facts, read from the Demo at commit DEMO_COMMIT (file and line
with each): the duplex object's method signatures and defaults, `needs_finalize` being a
property, the stream constants, the first unit's alignment, the result keys, the demo's
`force_listen_count`, and the prompt template and voice loading of `DuplexView`.

- `test_the_standin_*` and `test_the_adapter_*` (always run) check the stand-in and the
  adapter against DEMO.
- `test_demo_facts_are_upstreams` re-reads DEMO from a checkout of MiniCPM-o-Demo with
  `ast` (no import, no torch) when DUPLEXMPE_UPSTREAM_MINICPMO names one, so the carried
  facts are themselves checked against upstream; without it the test says how to run it.
"""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

import numpy as np
import pytest

import minicpmo_adapter as ma
import standin_minicpmo

DEMO_COMMIT = "28b60cfb2a4d7156d045121e9ca2d31cd33f5d5d"
UNIFIED = "MiniCPMO45/modeling_minicpmo_unified.py"
PROCESSING = "MiniCPMO45/processing_minicpmo.py"
SCHEMAS = "core/schemas/duplex.py"
VIEWS = "core/processors/unified.py"
NO_DEFAULT = "<required>"

DEMO = {
    # UNIFIED class DuplexCapability (L4216); each parameter with its default's source text.
    "signatures": {
        "__init__": [("model", NO_DEFAULT), ("generate_audio", "True"), ("ls_mode", "'explicit'"),
                     ("device", "'cuda'"), ("**kwargs", NO_DEFAULT)],  # L4236
        "prepare": [("prefix_system_prompt", "None"), ("suffix_system_prompt", "None"), ("ref_audio", "None"),
                    ("prompt_wav_path", "None"), ("context_previous_marker", "'\\n\\nprevious: '")],  # L4452
        "streaming_prefill": [("audio_waveform", "None"), ("frame_list", "None"), ("max_slice_nums", "1"),
                              ("batch_vision_feed", "False")],  # L4543
        "streaming_generate": [("prompt_wav_path", "None"), ("max_new_speak_tokens_per_chunk", "20"),
                               ("decode_mode", "'sampling'"), ("temperature", "0.7"), ("top_k", "20"),
                               ("top_p", "0.8"), ("listen_prob_scale", "1.0"), ("listen_top_k", "None"),
                               ("text_repetition_penalty", "1.05"), ("text_repetition_window_size", "512"),
                               ("length_penalty", "1.1"), ("force_listen_override", "False")],  # L4958
        "finalize_unit": [],  # L5266
        "_generate_silence_waveform": [("duration_sec", "1.0")],  # L5538, a staticmethod
    },
    "properties": ["needs_finalize"],  # L4952: @property def needs_finalize(self) -> bool
    # DuplexCapability.__init__: kwargs.get(name, default) (L4283-L4294)
    "kwargs_defaults": {"force_listen_count": 0, "chunk_ms": 1000, "first_chunk_ms": 1035, "sample_rate": 16000},
    "silence_sample_rate": 24000,  # _generate_silence_waveform: sample_rate = 24000 (L5540)
    # _make_generate_result's dict (L4922)
    "result_keys": ["is_listen", "text", "audio_waveform", "end_of_turn", "current_time", "cost_llm",
                    "cost_tts_prep", "cost_tts", "cost_token2wav", "cost_all", "n_tokens", "n_tts_tokens"],
    # PROCESSING class StreamingMelProcessorExact (L710): hop_length default 160 (L727), and
    # aligned_first = max(hop, (raw_first_samples // hop) * hop) (L748)
    "mel_hop_length": 160,
    "first_chunk_aligned_to_hop": True,
    "demo_force_listen_count": 3,  # SCHEMAS DuplexConfig.force_listen_count = Field(3, ...) (L208)
    # VIEWS DuplexView.prepare (L862-L882) and _load_ref_audio (L855)
    "default_system_prompt": "Streaming Omni Conversation.",
    "prefix_template": "<|im_start|>system\n{system_prompt_text}\n<|audio_start|>",
    "suffix": "<|audio_end|><|im_end|>",
    "ref_audio_load": {"sr": 16000, "mono": True},
}


# ---- the stand-in and the adapter against DEMO ------------------------------------------

def signature_of(function) -> list[tuple[str, str]]:
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.name == "self":
            continue
        if p.kind is p.VAR_KEYWORD:
            out.append((f"**{p.name}", NO_DEFAULT))
        elif p.kind is p.VAR_POSITIONAL:
            out.append((f"*{p.name}", NO_DEFAULT))
        else:
            out.append((p.name, NO_DEFAULT if p.default is p.empty else repr(p.default)))
    return out


@pytest.mark.parametrize("method", sorted(DEMO["signatures"]))
def test_the_standin_has_the_demos_signatures(method):
    assert signature_of(getattr(standin_minicpmo.Duplex, method)) == DEMO["signatures"][method]


def test_the_standin_has_the_demos_properties():
    for name in DEMO["properties"]:
        assert isinstance(inspect.getattr_static(standin_minicpmo.Duplex, name), property), \
            f"{name} is a property in the demo ({UNIFIED} @ {DEMO_COMMIT[:7]}), not a method"
    assert isinstance(inspect.getattr_static(standin_minicpmo.Duplex, "_generate_silence_waveform"), staticmethod)


def test_the_standin_has_the_demos_stream_constants():
    d = standin_minicpmo.Duplex(standin_minicpmo.Model("x", {}))
    kw = DEMO["kwargs_defaults"]
    assert (d.force_listen_count, d.CHUNK_MS, d.FIRST_CHUNK_MS, d.SAMPLE_RATE) == (
        kw["force_listen_count"], kw["chunk_ms"], kw["first_chunk_ms"], kw["sample_rate"])
    assert standin_minicpmo.HOP == DEMO["mel_hop_length"]
    assert d._generate_silence_waveform().shape == (DEMO["silence_sample_rate"],)
    d.prepare()
    assert set(d.streaming_generate()) == set(DEMO["result_keys"])


def test_the_standin_has_the_demos_unit_sizes():
    """The first unit: padded at the front to FIRST_CHUNK_MS, the hop-aligned part of it
    consumed; later units CHUNK_MS each."""
    kw = DEMO["kwargs_defaults"]
    rate, hop = kw["sample_rate"], DEMO["mel_hop_length"]
    padded = int(kw["first_chunk_ms"] * rate / 1000)
    first = max(hop, round(kw["first_chunk_ms"] * rate / 1000) // hop * hop)
    later = int(kw["chunk_ms"] * rate / 1000)
    assert (padded, first, later) == (16560, 16480, 16000)
    d = standin_minicpmo.Duplex(standin_minicpmo.Model("x", {}))
    d.prepare()
    assert d.streaming_prefill(audio_waveform=np.zeros(8000, np.float32))["success"]
    assert d.audio_buffer.size == padded - first  # 8000 padded to 16560, 16480 consumed
    d.streaming_generate()
    d.finalize_unit()
    assert not d.streaming_prefill(audio_waveform=np.zeros(later - 81, np.float32))["success"]
    assert d.streaming_prefill(audio_waveform=np.zeros(1, np.float32))["success"]
    assert d.audio_buffer.size == 0


def test_the_standin_refuses_a_prefill_before_finalize_like_the_demo():
    d = standin_minicpmo.Duplex(standin_minicpmo.Model("x", {}))
    d.prepare()
    d.streaming_prefill(audio_waveform=np.zeros(16000, np.float32))
    d.streaming_generate()
    assert d.needs_finalize
    with pytest.raises(RuntimeError, match="before finalize_unit"):
        d.streaming_prefill(audio_waveform=np.zeros(16000, np.float32))


def test_the_standin_forces_the_first_units_to_listen():
    d = standin_minicpmo.Duplex(standin_minicpmo.Model("x", {}), force_listen_count=2)
    d.prepare()
    loud = (0.4 * np.sin(np.arange(16000) / 3)).astype(np.float32)
    for unit in (loud, np.zeros(16000, np.float32), np.zeros(16000, np.float32)):
        d.streaming_prefill(audio_waveform=unit)
        r = d.streaming_generate()
        d.finalize_unit()
    assert not r["is_listen"]  # the third unit is the first it may speak in
    assert d._streaming_generate_count == 3
    d.prepare()
    assert d._streaming_generate_count == 0  # prepare() resets the count


def test_the_adapter_uses_the_demos_template_prompt_and_startup_protection():
    head, tail = DEMO["prefix_template"].split("{system_prompt_text}")
    assert ma.PROMPT_PREFIX == head + "{text}" + tail
    assert ma.PROMPT_SUFFIX == DEMO["suffix"]
    assert ma.DEFAULT_SYSTEM_PROMPT == DEMO["default_system_prompt"]
    assert ma.FORCE_LISTEN_COUNT == DEMO["demo_force_listen_count"]
    assert (ma.INPUT_RATE, ma.OUTPUT_RATE, ma.FRAME_SIZE) == (
        DEMO["ref_audio_load"]["sr"], DEMO["silence_sample_rate"], DEMO["kwargs_defaults"]["chunk_ms"] * 16)


# ---- DEMO against upstream's source ------------------------------------------------------

def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _ast_signature(f: ast.FunctionDef) -> list[tuple[str, str]]:
    args = f.args.args
    defaults = [None] * (len(args) - len(f.args.defaults)) + list(f.args.defaults)
    out = [(a.arg, NO_DEFAULT if d is None else repr(ast.literal_eval(d))) for a, d in zip(args, defaults)
           if a.arg != "self"]
    out += [(a.arg, NO_DEFAULT if d is None else repr(ast.literal_eval(d)))
            for a, d in zip(f.args.kwonlyargs, f.args.kw_defaults)]
    if f.args.vararg:
        out.append((f"*{f.args.vararg.arg}", NO_DEFAULT))
    if f.args.kwarg:
        out.append((f"**{f.args.kwarg.arg}", NO_DEFAULT))
    return out


def _decorators(f: ast.FunctionDef) -> set[str]:
    return {ast.unparse(d) for d in f.decorator_list}


def demo_facts(root: Path) -> dict:
    """DEMO's facts, read from a MiniCPM-o-Demo checkout's source."""
    unified = ast.parse((root / UNIFIED).read_text())
    cap = _class(unified, "DuplexCapability")
    facts: dict = {"signatures": {m: _ast_signature(_method(cap, m)) for m in DEMO["signatures"]}}
    facts["properties"] = [n.name for n in cap.body
                           if isinstance(n, ast.FunctionDef) and "property" in _decorators(n)]
    init = _method(cap, "__init__")
    kwargs = {}
    for node in ast.walk(init):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and ast.unparse(node.func.value) == "kwargs" and len(node.args) == 2):
            kwargs[ast.literal_eval(node.args[0])] = ast.literal_eval(node.args[1])
    facts["kwargs_defaults"] = {k: kwargs[k] for k in DEMO["kwargs_defaults"]}
    silence = _method(cap, "_generate_silence_waveform")
    assert "staticmethod" in _decorators(silence)
    facts["silence_sample_rate"] = next(ast.literal_eval(n.value) for n in ast.walk(silence)
                                        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "sample_rate")
    result = _method(cap, "_make_generate_result")
    ret = next(n for n in ast.walk(result) if isinstance(n, ast.Return))
    facts["result_keys"] = [ast.literal_eval(k) for k in ret.value.keys]

    processing = ast.parse((root / PROCESSING).read_text())
    mel_init = _method(_class(processing, "StreamingMelProcessorExact"), "__init__")
    facts["mel_hop_length"] = ast.literal_eval(dict(_ast_signature(mel_init))["hop_length"])
    facts["first_chunk_aligned_to_hop"] = any(
        ast.unparse(n) == "aligned_first = max(hop, raw_first_samples // hop * hop)"
        for n in ast.walk(mel_init) if isinstance(n, ast.Assign))

    schemas = ast.parse((root / SCHEMAS).read_text())
    config = _class(schemas, "DuplexConfig")
    field = next(n for n in config.body if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "force_listen_count")
    facts["demo_force_listen_count"] = ast.literal_eval(field.value.args[0])

    views = ast.parse((root / VIEWS).read_text())
    view = _class(views, "DuplexView")
    prepare = _method(view, "prepare")
    assigns = {ast.unparse(n.targets[0]): n.value for n in ast.walk(prepare) if isinstance(n, ast.Assign)}
    facts["default_system_prompt"] = ast.literal_eval(assigns["system_prompt_text"])
    prefix = assigns["prefix_system_prompt"]
    facts["prefix_template"] = "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                                       for v in prefix.values)
    facts["suffix"] = ast.literal_eval(assigns["suffix_system_prompt"])
    load = next(n for n in ast.walk(_method(view, "_load_ref_audio"))
                if isinstance(n, ast.Call) and ast.unparse(n.func) == "librosa.load")
    facts["ref_audio_load"] = {k.arg: ast.literal_eval(k.value) for k in load.keywords}
    return facts


def test_demo_facts_are_upstreams():
    root = os.environ.get("DUPLEXMPE_UPSTREAM_MINICPMO", "")
    if not root:
        pytest.skip("DUPLEXMPE_UPSTREAM_MINICPMO is not set: point it at a checkout of OpenBMB/MiniCPM-o-Demo "
                    f"(commit {DEMO_COMMIT[:7]}) to check the carried facts against its source")
    facts = demo_facts(Path(root))
    for key, want in DEMO.items():
        assert facts[key] == want, f"{key}: the demo at {root} says {facts[key]!r}, this test carries {want!r}"
