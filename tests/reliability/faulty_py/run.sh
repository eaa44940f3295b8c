#!/bin/bash
# Starts the Python fault plugin behind a wrapper that does not exec: the plugin is the
# host's grandchild, which the kernel's parent-death signal does not reach. PYTHON is the
# interpreter with duplexmpe_plugin installed (the repository's .venv).
"${PYTHON:-python3}" "$(dirname "$0")/faulty.py"
echo "faulty.py exited with status $?" >&2
