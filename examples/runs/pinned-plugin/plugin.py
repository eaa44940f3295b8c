"""quiet: the smallest Python model plugin, here to be pinned by examples/runs/pinned.hcl.

It never speaks: every 80 ms input frame at 16 kHz is answered with no audio. What
matters is that it is Python code in its own directory, which a run file pins by the
h1: hash of that directory (hashing the interpreter would prove nothing).
"""

from duplexmpe_plugin import Conversation, ConversationStart, Format, Model, Output, serve


class Quiet(Model):
    name = "quiet"
    version = "0.1.0"
    description = "Never speaks. An example of a pinned Python plugin, not a model."

    def start(self, req: ConversationStart) -> Conversation:
        return QuietConversation()


class QuietConversation(Conversation):
    format = Format(input_rate=16000, output_rate=16000, frame_size=1280)

    def step(self, frame) -> Output:
        return Output()


if __name__ == "__main__":
    serve(Quiet())
