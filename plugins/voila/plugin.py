"""The voila model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import duplexmpe_plugin as sdk  # noqa: E402

import voila_adapter as ma  # noqa: E402


class VoilaConversation(sdk.Conversation):
    def __init__(self, inner: ma.VoilaConversation):
        self.inner = inner
        self.format = sdk.Format(input_rate=inner.input_rate, output_rate=inner.output_rate,
                                 frame_size=inner.frame_size)

    def step(self, frame):
        out = self.inner.step(frame)
        return sdk.Output(samples=out.samples, text=out.text, flush=out.flush)

    def close(self):
        self.inner.close()


class VoilaPlugin(sdk.Model):
    name = ma.NAME
    version = ma.VERSION
    description = ("Voila-autonomous (preview) in-process: run_generate turned into a step function, 40 ms frames "
                   "(one audio token) at 16 kHz, text steps consume no input, Encodec with 1 s of context both ways.")
    capabilities = ("model.text", "model.instruction", "model.concurrency=1")
    config = tuple(sdk.ConfigField(name=f.name, type=f.type, default=f.default, description=f.description,
                                   allowed=f.allowed) for f in ma.SCHEMA)

    def __init__(self):
        self.adapter = ma.VoilaAdapter()

    def identity(self):
        return self.adapter.identity()

    def configure(self, config):
        self.adapter.configure(config)

    def start(self, req):
        try:
            return VoilaConversation(self.adapter.start(req.id, req.seed, req.instruction))
        except ValueError as e:
            raise sdk.InvalidArgument(str(e)) from e
        except RuntimeError as e:
            raise sdk.FailedPrecondition(str(e)) from e


if __name__ == "__main__":
    sdk.serve(VoilaPlugin())
