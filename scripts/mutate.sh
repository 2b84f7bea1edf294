#!/usr/bin/env bash
# Mutation testing of the trust-critical code (issue 30): applies each
# mutation of scripts/mutations.txt to a copy of the source tree
# (build-mut/tree; the working tree is never written), rebuilds it
# incrementally (Release, no sanitizers), runs the tests the mutation names
# and reports the kill rate and every survivor. See scripts/mutate.py
# --help and docs/internals/testing.md, "Mutation testing".
#   scripts/mutate.sh            all mutations (-j 2)
#   scripts/mutate.sh --quick    the few marked quick
#   scripts/mutate.sh --list     what would run
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v python3 >/dev/null || { echo "mutate.sh: needs python3 (scripts/bootstrap.sh installs it)" >&2; exit 2; }
exec python3 "$here/mutate.py" "$@"
