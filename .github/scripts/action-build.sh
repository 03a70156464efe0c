#!/usr/bin/env bash
# The build step of sitegen's action (action.yml, docs/ci.md): `sitegen build` with the action's inputs, wrapped
# in bad-input-summary.sh (bad input goes to the job summary), continuing the history read from the history
# branch or, with record-history, recording the run there (history-branch.sh). Writes `exit-code` to
# $GITHUB_OUTPUT and exits with sitegen's exit code: 0 done, 1 a regression under fail-on-regression, 2 bad input.
# A history branch that cannot be read or recorded on never changes it: a `::warning` and a line on the summary.
#
# Environment (set by action.yml from its inputs; empty means sitegen's default):
#   INPUT_CASES, INPUT_FIXTURES, INPUT_CONFIG, INPUT_BASELINE, INPUT_OUT, INPUT_CASE_PAGES
#   INPUT_FAIL_ON_REGRESSION     true or false
#   INPUT_RECORD_HISTORY         true or false
#   SITEGEN_HISTORY_BRANCH       the history branch (empty: no history); SITEGEN_HISTORY_TOKEN, history-branch.sh's
#   ACTION_STATE                 a folder of the action's own (the history read, the JUnit and OTLP files)
#   PR_NUMBER                    the pull request's number (empty outside pull requests)
#   GITHUB_SHA, GITHUB_REF_NAME, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY (set by the runner)
set -euo pipefail

scripts=$(cd "$(dirname "$0")" && pwd)

# A wrong input is bad input too: said on the job summary like sitegen's own, exit 2.
refuse() {
    echo "exit-code=2" >>"$GITHUB_OUTPUT"
    # shellcheck disable=SC2016 # $1 is the inner shell's: the message, passed as an argument, never as code
    "$scripts/bad-input-summary.sh" bash -c 'echo "error: $1" >&2; exit 2' refuse "$1"
}

boolean() {
    case "$2" in
        true | false) ;;
        *) refuse "action input $1: expected true or false, got '$2'" ;;
    esac
}
boolean fail-on-regression "${INPUT_FAIL_ON_REGRESSION}"
boolean record-history "${INPUT_RECORD_HISTORY}"
if [ "$INPUT_RECORD_HISTORY" = true ] && [ -z "${SITEGEN_HISTORY_BRANCH}" ]; then
    refuse "action input record-history: true needs a history-branch to record on"
fi

args=(build --out "${INPUT_OUT:-site}" --junit "$ACTION_STATE/junit.xml" --otlp "$ACTION_STATE/results.otlp.jsonl")
for option in cases fixtures config baseline case-pages; do
    variable="INPUT_$(printf '%s' "$option" | tr 'a-z-' 'A-Z_')"
    if [ -n "${!variable:-}" ]; then
        args+=("--$option" "${!variable}")
    fi
done
if [ "$INPUT_FAIL_ON_REGRESSION" = true ]; then
    args+=(--fail-on-regression)
fi

# A pull request's run is labelled with its number and replaces its own earlier run; a recorded run is the commit's,
# dated by it, so re-running an old commit's job puts its point back in its place (docs/ci.md).
if [ -n "${PR_NUMBER:-}" ]; then
    args+=(--run-id "pr-${PR_NUMBER}" --run-label "PR #${PR_NUMBER}")
elif [ "$INPUT_RECORD_HISTORY" = true ]; then
    args+=(--run-id "${GITHUB_REF_NAME}-${GITHUB_SHA}")
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
    export SOURCE_DATE_EPOCH
fi

# The history branch never stops the build (docs/ci.md, "When the history branch cannot be read"): a branch that
# cannot be read or recorded on is a warning, on the run and on the job summary, and the site is built all the same;
# exit 1 stays the gate's.
history="$ACTION_STATE/history"
problems="$ACTION_STATE/history-problems"
rm -f "$problems"
export SITEGEN_HISTORY_PROBLEMS="$problems"
status=0
if [ "$INPUT_RECORD_HISTORY" = true ]; then
    args+=(--history "$history/history.json" --history-optional)
    "$scripts/history-branch.sh" record "$history" "${INPUT_OUT:-site}/history.json" -- \
        "$scripts/bad-input-summary.sh" sitegen "${args[@]}" || status=$?
else
    if [ -n "${SITEGEN_HISTORY_BRANCH}" ]; then
        if "$scripts/history-branch.sh" read "$history"; then
            args+=(--history "$history/history.json" --history-optional)
        fi
    fi
    "$scripts/bad-input-summary.sh" sitegen "${args[@]}" || status=$?
fi
if [ -s "$problems" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
        echo
        while IFS= read -r problem; do
            echo "> ⚠️ **Run history**: ${problem}; this site's history shows only the runs it could read."
        done <"$problems"
    } >>"$GITHUB_STEP_SUMMARY"
fi
echo "exit-code=$status" >>"$GITHUB_OUTPUT"
exit "$status"
