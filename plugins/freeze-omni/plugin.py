"""The freeze-omni model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import duplexmpe_plugin as sdk  # noqa: E402

import freeze_omni_adapter as ma  # noqa: E402


class FreezeOmniConversation(sdk.Conversation):
    def __init__(self, inner: ma.FreezeOmniConversation):
        self.inner = inner
        self.format = sdk.Format(input_rate=inner.input_rate, output_rate=inner.output_rate,
                                 frame_size=inner.frame_size)

    def step(self, frame):
        out = self.inner.step(frame)
        return sdk.Output(samples=out.samples, text=out.text, flush=out.flush)

    def close(self):
        self.inner.close()


class FreezeOmniPlugin(sdk.Model):
    name = ma.NAME
    version = ma.VERSION
    description = ("Freeze-Omni in-process on the frame clock: Silero VAD + LLM state prediction per 160 ms chunk "
                   "(16 kHz in), the whole answer voiced at once when it starts speaking (24 kHz out, bursty).")
    capabilities = ("model.text", "model.instruction", "model.concurrency=1")
    config = tuple(sdk.ConfigField(name=f.name, type=f.type, default=f.default, description=f.description,
                                   allowed=f.allowed) for f in ma.SCHEMA)

    def __init__(self):
        self.adapter = ma.FreezeOmniAdapter()

    def identity(self):
        return self.adapter.identity()

    def configure(self, config):
        self.adapter.configure(config)

    def start(self, req):
        try:
            return FreezeOmniConversation(self.adapter.start(req.id, req.seed, req.instruction))
        except ValueError as e:
            raise sdk.InvalidArgument(str(e)) from e
        except RuntimeError as e:
            raise sdk.FailedPrecondition(str(e)) from e


if __name__ == "__main__":
    sdk.serve(FreezeOmniPlugin())
