"""The host's death pipe: a plugin (and its whole process group) ends when the host's end
of the pipe closes, even while it is still loading, before serve()."""

import os
import subprocess
import sys
import time

from duplexmpe_plugin import hostwatch

# A "plugin" that imports the SDK (which starts the watch), starts a grandchild in its
# group, then loads for a minute before it would serve.
CHILD = """
import subprocess, sys, time
import duplexmpe_plugin
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(grandchild.pid, flush=True)
time.sleep(60)
"""


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def wait_gone(pids, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def test_parse():
    assert hostwatch.parse("3:12345") == (3, 12345)
    for bad in ("", "3", "x:1", "3:y", "2:5", "-3:5"):
        assert hostwatch.parse(bad) is None


def start_child(wrong_inode=False):
    r, w = os.pipe()
    ino = os.fstat(r).st_ino + (1 if wrong_inode else 0)
    env = dict(os.environ)
    env[hostwatch.ENV_HOST_PIPE] = f"{r}:{ino}"
    proc = subprocess.Popen([sys.executable, "-c", CHILD], env=env, pass_fds=(r,), stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    os.close(r)
    grandchild = int(proc.stdout.readline())
    return proc, grandchild, w


def test_the_group_dies_when_the_host_end_closes():
    proc, grandchild, w = start_child()
    try:
        time.sleep(0.2)
        assert alive(proc.pid) and alive(grandchild), "the plugin stopped while its host was alive"
        os.close(w)  # what the kernel does when the host dies
        assert wait_gone([proc.pid, grandchild]), "the plugin or its child outlived the host"
        assert proc.wait(5) != 0
    finally:
        for pid in (proc.pid, grandchild):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def test_a_wrong_inode_is_not_watched():
    # Another file at that descriptor (a wrapper reused the number) is never taken for the pipe.
    proc, grandchild, w = start_child(wrong_inode=True)
    try:
        os.close(w)
        time.sleep(0.5)
        assert alive(proc.pid), "the watch acted on a descriptor that is not the host's pipe"
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(5)
