#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: run a real Python script in the default sandbox, show its
# output and psrun's result.
set -eu
PSRUN=${1:-build/psrun}
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/examples/demo.py

echo "\$ psrun run --json -- python3 /opt/demo.py"
echo
# The script is bound read-only into the sandbox; all else is the default policy.
status=0
"$PSRUN" run --json -o "mounts=$SCRIPT:/opt/demo.py:ro" -- python3 /opt/demo.py || status=$?
echo
echo "(psrun exited with $status; the JSON line above is the result, printed on stderr)"
exit "$status"
