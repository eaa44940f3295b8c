"""The duplexmpe SDK binding that every Python model adapter in plugins/ shares.

An adapter module (moshi_adapter.py, ...) holds config checking, loading and the step
loop, and knows nothing of the wire. Its plugin.py puts this directory on sys.path and
calls `serve`, which wraps the adapter in a `duplexmpe_plugin.Model`:

- `config` is the adapter's SCHEMA as SDK ConfigFields;
- `configure` and `identity` go straight to the adapter;
- `start` maps the adapter's ValueError (bad conversation start, e.g. an instruction
  the model cannot take) to InvalidArgument and its RuntimeError (not configured) to
  FailedPrecondition;
- each conversation's `step` turns the adapter's StepOutput into an SDK Output.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType

import duplexmpe_plugin as sdk


def shared_code_digest(directory: Path = Path(__file__).resolve().parent) -> str:
    """SHA-256 over the shared adapter code (every .py file under `directory`, tests
    excepted, by relative name and content). An adapter's h1: pin covers only its own
    directory; this digest in its identity makes the run manifest and the item ids
    change whenever the code it imports from here changes."""
    h = hashlib.sha256()
    for path in sorted(directory.rglob("*.py")):
        rel = path.relative_to(directory)
        if rel.parts[0] == "tests" or "__pycache__" in rel.parts:
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


SHARED_CODE_DIGEST = shared_code_digest()


class AdapterConversation(sdk.Conversation):
    def __init__(self, inner):
        self.inner = inner
        self.format = sdk.Format(input_rate=inner.input_rate, output_rate=inner.output_rate,
                                 frame_size=inner.frame_size)

    def step(self, frame):
        out = self.inner.step(frame)
        return sdk.Output(samples=out.samples, text=out.text, flush=out.flush)

    def close(self):
        self.inner.close()


class AdapterPlugin(sdk.Model):
    """A Model over `adapter`: an object with configure(config), identity() and
    start(conversation_id, seed, instruction) returning a conversation with input_rate,
    output_rate, frame_size, step(frame) and close()."""

    def __init__(self, module: ModuleType, adapter, description: str, capabilities: tuple[str, ...]):
        self.name = module.NAME
        self.version = module.VERSION
        self.description = description
        self.capabilities = tuple(capabilities)
        self.config = tuple(sdk.ConfigField(name=f.name, type=f.type, default=f.default,
                                            description=f.description, allowed=f.allowed)
                            for f in module.SCHEMA)
        self.adapter = adapter

    def identity(self):
        return {**self.adapter.identity(), "shared_code": SHARED_CODE_DIGEST}

    def configure(self, config):
        self.adapter.configure(config)

    def start(self, req):
        try:
            return AdapterConversation(self.adapter.start(req.id, req.seed, req.instruction))
        except ValueError as e:
            raise sdk.InvalidArgument(str(e)) from e
        except RuntimeError as e:
            raise sdk.FailedPrecondition(str(e)) from e


def serve(module: ModuleType, adapter, description: str, capabilities: tuple[str, ...]) -> None:
    """Serves the adapter as a duplexmpe model plugin until the host stops it."""
    sdk.serve(AdapterPlugin(module, adapter, description, capabilities))
