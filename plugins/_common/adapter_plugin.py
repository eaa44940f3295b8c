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

from types import ModuleType

import duplexmpe_plugin as sdk


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
        return self.adapter.identity()

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
