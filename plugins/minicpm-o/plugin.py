"""The minicpm-o model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import duplexmpe_plugin as sdk  # noqa: E402

import minicpmo_adapter as ma  # noqa: E402


class MiniCPMOConversation(sdk.Conversation):
    def __init__(self, inner: ma.MiniCPMOConversation):
        self.inner = inner
        self.format = sdk.Format(input_rate=inner.input_rate, output_rate=inner.output_rate,
                                 frame_size=inner.frame_size)

    def step(self, frame):
        out = self.inner.step(frame)
        return sdk.Output(samples=out.samples, text=out.text, flush=out.flush)

    def close(self):
        self.inner.close()


class MiniCPMOPlugin(sdk.Model):
    name = ma.NAME
    version = ma.VERSION
    description = ("MiniCPM-o 4.5 in duplex mode in-process: one 1 s unit per step (16 kHz in, 24 kHz out), "
                   "streaming_prefill then streaming_generate; listen units play nothing.")
    capabilities = ("model.text", "model.instruction", "model.concurrency=1")
    config = tuple(sdk.ConfigField(name=f.name, type=f.type, default=f.default, description=f.description,
                                   allowed=f.allowed) for f in ma.SCHEMA)

    def __init__(self):
        self.adapter = ma.MiniCPMOAdapter()

    def identity(self):
        return self.adapter.identity()

    def configure(self, config):
        self.adapter.configure(config)

    def start(self, req):
        try:
            return MiniCPMOConversation(self.adapter.start(req.id, req.seed, req.instruction))
        except ValueError as e:
            raise sdk.InvalidArgument(str(e)) from e
        except RuntimeError as e:
            raise sdk.FailedPrecondition(str(e)) from e


if __name__ == "__main__":
    sdk.serve(MiniCPMOPlugin())
