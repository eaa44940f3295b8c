"""Test helpers shared by the model adapters' plugin-process tests (plugins/*/tests).

`running` starts an adapter's plugin.py as a real plugin process (go-plugin handshake,
mTLS, gRPC) with the numpy stand-ins (plugins/_standins) on PYTHONPATH, and checks that
it exits cleanly; `converse` runs one conversation over the Model service.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2
from duplexmpe_plugin.testing import launch

STANDINS = Path(__file__).resolve().parent.parent / "_standins"


def running(plugin_dir: Path):
    """A generator for a module-scoped pytest fixture: `yield from running(PLUGIN_DIR)`."""
    env = {"PYTHONPATH": os.pathsep.join([str(STANDINS), os.environ.get("PYTHONPATH", "")])}
    with launch([sys.executable, str(plugin_dir / "plugin.py")], env=env, cwd=str(plugin_dir)) as p:
        yield p
        assert p.shutdown() == 0


def converse(p, seed: int, frames, instruction: str = ""):
    """One conversation of float32 frames; returns the ready message and the output frames."""
    def requests():
        yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="c", seed=seed,
                                                                     instruction=instruction))
        for i, f in enumerate(frames):
            yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
        yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())
    replies = list(p.model.Converse(requests(), timeout=60))
    return replies[0].ready, [r.frame for r in replies[1:]]
