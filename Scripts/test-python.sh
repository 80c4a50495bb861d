#!/usr/bin/env bash
# The Python tools the tests run, from PyPI, in a virtual environment of the project's own:
# .build/test-python (created, and the pinned versions installed, when missing).
# Prints the environment's bin folder. Usage: Scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/test-python
# schemathesis: property-based tests of `notes serve` against its OpenAPI document.
requirements=("schemathesis==4.32.5")
if [ ! -x "$venv/bin/python" ]; then
    mkdir -p .build
    # Debian's python3 (python3-venv, from Scripts/bootstrap.sh test) first, else whatever is on PATH.
    python=/usr/bin/python3
    [ -x "$python" ] && "$python" -c 'import venv, ensurepip' >/dev/null 2>&1 || python=python3
    "$python" -m venv "$venv" >&2
fi
for requirement in "${requirements[@]}"; do
    if ! "$venv/bin/python" -m pip show "${requirement%%==*}" 2>/dev/null | grep -q "^Version: ${requirement##*==}$"; then
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$requirement" >&2
    fi
done
echo "$PWD/$venv/bin"
