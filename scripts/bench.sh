#!/usr/bin/env bash
# make bench: see scripts/bench.py. Usage: bench.sh BUILD_DIR [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bench.py "$@"
