#!/usr/bin/env bash
# Mutation testing, a manual command (docs/testing.md, "Mutation testing"): cosmic-ray over one module, with the
# test files its config names, in a scratch copy of the tracked files (cosmic-ray edits the module in place, so
# the working tree stays untouched and usable meanwhile). Prints the survivors; the session is kept in
# tests/mutation/<module>.sqlite (not committed) for `cr-report` and `cosmic-ray dump`.
#   tests/mutation/run.sh rules|diff|staging|redaction [EVERY]   (EVERY=n: only every n-th mutant, a documented sample)
set -euo pipefail
module=${1:?usage: tests/mutation/run.sh rules|diff|staging|redaction [EVERY]}
every=${2:-1}
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sitegen-mutation-$module.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
(cd "$repo" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$scratch"
cd "$scratch"
# The tests, and the builds they start in subprocesses, import this copy rather than the installed sitegen.
export PYTHONPATH="$scratch"
session="$repo/tests/mutation/$module.sqlite"
config="tests/mutation/$module.toml"
cosmic-ray init "$config" "$session" --force
if [ "$every" -gt 1 ]; then
  python tests/mutation/sample.py "$session" "$every"
fi
cosmic-ray baseline "$config"
cosmic-ray exec "$config" "$session"
cr-report "$session" --show-pending | tail -n 3
python tests/mutation/survivors.py "$session"
if grep -q '^then-command' "$config"; then
  echo "the survivors against the slower tests:"
  python "$repo/tests/mutation/recheck.py" "$module" --then
fi
