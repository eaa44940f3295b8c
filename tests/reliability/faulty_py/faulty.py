"""faulty: a Python model plugin that misbehaves on purpose, for the reliability tests.

Silent until the fault its config names strikes, at frame ``at_frame`` of the
conversations it names (all when none are named):

    sys_exit   step calls sys.exit(3)
    raise      step raises RuntimeError
    hang       step never returns
    flood      flood_frames steps from at_frame on print 1 MiB to stdout each
    setsid     start spawns a child in a session of its own (setsid) that keeps the
               plugin's stdout and stderr and sleeps; its pid goes to pid_file

FAULTY_START_DELAY (seconds) makes it load that long before it serves, as a model
loading weights does. run.sh starts it behind a wrapper that does not exec.
"""

import os
import subprocess
import sys
import threading
import time

import duplexmpe_plugin as dp

FAULTS = ("none", "sys_exit", "raise", "hang", "flood", "setsid")
RATE, FRAME = 16000, 1280
MEGABYTE = ("flood " * 16 + "\n") * ((1 << 20) // 97)


class Faulty(dp.Model):
    name = "faulty-py"
    version = "1.0.0"
    description = "Silent until its configured fault strikes; for the reliability tests."
    config = (
        dp.ConfigField("fault", dp.TYPE_STRING, default="none", allowed=FAULTS),
        dp.ConfigField("at_frame", dp.TYPE_NUMBER, default=3.0),
        dp.ConfigField("conversations", dp.TYPE_LIST_STRING, default=[]),
        dp.ConfigField("flood_frames", dp.TYPE_NUMBER, default=50.0),
        dp.ConfigField("pid_file", dp.TYPE_STRING, default=""),
    )

    def __init__(self):
        self.fault, self.at, self.convs, self.flood, self.pid_file = "none", 3, [], 50, ""

    def configure(self, config):
        self.fault = config.get("fault", "none")
        self.at = int(config.get("at_frame", 3))
        self.convs = list(config.get("conversations", []))
        self.flood = int(config.get("flood_frames", 50))
        self.pid_file = config.get("pid_file", "")

    def identity(self):
        return {"fault": self.fault}

    def start(self, req):
        hit = not self.convs or req.id in self.convs
        if hit and self.fault == "setsid":
            child = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(3600)"],
                stdout=1, stderr=2, start_new_session=True,
            )
            if self.pid_file:
                with open(self.pid_file, "w") as f:
                    f.write(f"{child.pid}\n")
        return Conversation(self.fault if hit else "none", self.at, self.flood)


class Conversation(dp.Conversation):
    format = dp.Format(input_rate=RATE, output_rate=RATE, frame_size=FRAME)

    def __init__(self, fault, at, flood):
        self.fault, self.at, self.flood, self.n = fault, at, flood, 0

    def step(self, frame):
        n, self.n = self.n, self.n + 1
        if self.fault == "flood" and self.at <= n < self.at + self.flood:
            sys.stdout.write(MEGABYTE)
        if n == self.at:
            if self.fault == "sys_exit":
                sys.exit(3)
            if self.fault == "raise":
                raise RuntimeError(f"faulty: raised at frame {n}")
            if self.fault == "hang":
                threading.Event().wait()
        return dp.Output()


if __name__ == "__main__":
    delay = float(os.environ.get("FAULTY_START_DELAY") or 0)
    if delay > 0:
        time.sleep(delay)
    dp.serve(Faulty())
