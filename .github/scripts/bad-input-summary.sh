#!/usr/bin/env bash
# Run a sitegen command (the arguments); when it exits 2 (bad input: sitegen wrote nothing), put its error
# message and the input it names on the job summary, so that the author of a pull request sees what to fix
# without opening the log; when it exits 3 (a bug in sitegen), say that it is neither their input nor a regression. Any exit code is passed on; stderr still reaches the log as it is written.
#
#   bad-input-summary.sh sitegen build --fail-on-regression ...
set -uo pipefail

[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
# stderr through tee (a copy to read below), stdout straight through (fd 3); the pipeline ends after tee.
{ "$@" 2>&1 1>&3 3>&- | tee "$errors" >&2; } 3>&1
status=${PIPESTATUS[0]}

if [ "$status" -eq 2 ]; then
    message=$(grep -m1 '^error: ' "$errors" || true)
    message=${message#error: }
    # sitegen names the input first: `FILE[:PLACE]: what was expected`.
    where=${message%%: *}
    if [ -z "$message" ]; then
        # An option the command line itself refused (`Error: Invalid value for '--case-pages': …`).
        message=$(grep -m1 '^Error: ' "$errors" || true)
        message=${message#Error: }
        where="the command line"
    fi
    if [ -z "$message" ]; then
        message=$(tail -n 5 "$errors")
        where="the log"
    fi
    annotation=${message//%/%25}
    echo "::error::sitegen: bad input: ${annotation}"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
        {
            echo "### ❌ sitegen stopped on bad input (exit 2)"
            echo
            echo "<b>Where:</b> <code>$(printf '%s' "$where" | escape)</code>"
            echo
            echo "<pre>$(printf '%s' "$message" | escape)</pre>"
            echo
            echo "Nothing was built or published: fix the input named above and push again (\`sitegen check\` and"
            echo "\`sitegen build\` report the same message locally)."
        } >>"$GITHUB_STEP_SUMMARY"
    fi
elif [ "$status" -eq 3 ]; then
    # A bug in sitegen (docs/cli.md, "Exit codes"): not the pull request's fault, and not a regression.
    echo "::error::sitegen: internal error (a bug in sitegen, not the input): see the traceback in the log"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        {
            echo "### 💥 sitegen failed with an internal error (exit 3)"
            echo
            echo "This is a bug in sitegen, not a regression and not bad input: nothing was built or published."
            echo "The traceback is in the job's log; please report it."
        } >>"$GITHUB_STEP_SUMMARY"
    fi
fi
exit "$status"
