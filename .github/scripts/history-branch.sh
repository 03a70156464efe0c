#!/usr/bin/env bash
# The history of record of the eval site: history.json on a git branch of its own (docs/ci.md).
#
#   history-branch.sh read DIR
#       Copy the branch's history.json to DIR/history.json. Read only: nothing is ever pushed. When the
#       branch does not exist yet, DIR/history.json is removed (a first run starts a new history); any other
#       failure (network, permissions, a branch without history.json) removes it too, warns (a `::warning`,
#       and a line in $SITEGEN_HISTORY_PROBLEMS) and exits 1: the caller builds without the history, and says
#       so, rather than stop (docs/ci.md, "When the history branch cannot be read").
#
#   history-branch.sh record DIR SITE_HISTORY -- BUILD_COMMAND [ARG...]
#       Record this run on the branch. Each attempt reads the branch into DIR (as `read`), runs BUILD_COMMAND
#       (which reads DIR/history.json and writes the extended history to SITE_HISTORY, e.g.
#       `sitegen build --history DIR/history.json --history-optional --out site`), commits SITE_HISTORY as
#       history.json, with a README.md, on top of the branch tip it read (a parentless commit when the branch
#       is new) and pushes that commit without force. A rejected push means another run recorded first: the
#       next attempt reads the branch again and rebuilds, so sitegen places this run among the runs already
#       there (by createdAt, replacing its own runId). So the site built last is always built from the
#       history on the branch. A failing BUILD_COMMAND ends the script with its exit code; nothing is pushed.
#       A branch that cannot be read (as `read`) never stops the build: BUILD_COMMAND runs without DIR/history.json
#       and nothing is pushed; nor does a push that fails every attempt. Either warns as `read` does, and the
#       script exits with BUILD_COMMAND's exit code: a history problem is never mistaken for the gate's exit 1.
#
# Environment (all optional):
#   SITEGEN_HISTORY_BRANCH       the branch (default sitegen-history)
#   SITEGEN_HISTORY_REMOTE       the remote (default origin)
#   SITEGEN_HISTORY_ATTEMPTS     how many times record tries to push (default 5)
#   SITEGEN_HISTORY_RETRY_DELAY  seconds to wait before attempt n, times n-1 (default 2)
#   SITEGEN_HISTORY_MESSAGE      the commit message (default names the commit checked out)
#   SITEGEN_HISTORY_TOKEN        a token for the remote (the action passes the job's), used unless the checkout
#                                keeps credentials of its own; given to git in its environment, never as an argument
#   SITEGEN_HISTORY_PROBLEMS     a file each history problem is appended to, a line each (the action's job summary)
set -euo pipefail

branch=${SITEGEN_HISTORY_BRANCH:-sitegen-history}
remote=${SITEGEN_HISTORY_REMOTE:-origin}
attempts=${SITEGEN_HISTORY_ATTEMPTS:-5}
delay=${SITEGEN_HISTORY_RETRY_DELAY:-2}

readme="# ${branch}

The run history of the eval site: \`history.json\`, one run per push to the default branch, written
by the eval-site workflow (.github/scripts/history-branch.sh). Pull-request builds read it; GitHub Pages
is built from it. Do not edit by hand; see docs/ci.md (\"Recovering the history\").
"

# A history problem: an annotation on the run, and a line for the job summary. The build goes on without it.
warn() {
    echo "::warning title=sitegen history branch::$*"
    if [ -n "${SITEGEN_HISTORY_PROBLEMS:-}" ]; then
        printf '%s\n' "$*" >>"$SITEGEN_HISTORY_PROBLEMS"
    fi
}

usage() {
    sed -n '2,32p' "$0" >&2
    exit 2
}

# Run git against the remote, with SITEGEN_HISTORY_TOKEN as actions/checkout passes its token (an HTTP header for
# the server) when it is set and the checkout keeps no such header of its own (two would be refused).
remote_git() {
    if [ -z "${SITEGEN_HISTORY_TOKEN:-}" ] || git config --get-regexp '^http\..*\.extraheader$' >/dev/null 2>&1; then
        git "$@"
        return
    fi
    local basic
    basic=$(printf 'x-access-token:%s' "$SITEGEN_HISTORY_TOKEN" | base64 | tr -d '\n')
    GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader" \
        GIT_CONFIG_VALUE_0="AUTHORIZATION: basic ${basic}" git "$@"
}

# Fetch the branch and set `tip` to its commit id, or to "" when the branch does not exist yet; 1 (warned) when
# it cannot be read.
fetch_tip() {
    local status=0
    tip=""
    remote_git ls-remote --exit-code --heads "$remote" "refs/heads/$branch" >/dev/null || status=$?
    if [ "$status" -eq 2 ]; then
        return 0
    elif [ "$status" -ne 0 ]; then
        warn "cannot reach $remote to read branch $branch (git ls-remote exit $status)"
        return 1
    fi
    # A shallow fetch: CI checkouts are shallow, and only the tip's history.json is needed.
    if ! remote_git fetch --quiet --no-tags --depth=1 "$remote" "refs/heads/$branch"; then
        warn "cannot fetch branch $branch from $remote"
        return 1
    fi
    if ! tip=$(git rev-parse --verify --quiet 'FETCH_HEAD^{commit}'); then
        warn "fetched branch $branch but found no commit"
        return 1
    fi
}

# Copy history.json of commit $2 (or nothing, when $2 is empty) to $1/history.json; 1 (warned) when it has none.
extract() {
    local dir=$1 tip=$2
    mkdir -p "$dir"
    rm -f "$dir/history.json"
    if [ -z "$tip" ]; then
        echo "Branch $branch does not exist yet on $remote: this run starts the history."
        return 0
    fi
    if ! git cat-file -e "$tip:history.json" 2>/dev/null; then
        warn "branch $branch (commit ${tip:0:12}) has no history.json; see docs/ci.md"
        return 1
    fi
    git cat-file blob "$tip:history.json" >"$dir/history.json"
    echo "Read the run history from branch $branch (commit ${tip:0:12})."
}

# Read the branch into $1 (as `read`); 1 when it cannot be read, $1/history.json then absent.
read_history() {
    if fetch_tip && extract "$1" "$tip"; then
        return 0
    fi
    mkdir -p "$1"
    rm -f "$1/history.json"
    return 1
}

# Commit $1 as history.json on top of $2 (may be empty) and push it; 0 when recorded, 1 when the push failed.
commit_and_push() {
    local history=$1 tip=$2 blob readme_blob tree commit
    blob=$(git hash-object -w -- "$history")
    readme_blob=$(printf '%s' "$readme" | git hash-object -w --stdin)
    tree=$(printf '100644 blob %s\tREADME.md\n100644 blob %s\thistory.json\n' "$readme_blob" "$blob" | git mktree)
    if [ -n "$tip" ] && [ "$(git rev-parse "$tip^{tree}")" = "$tree" ]; then
        echo "The history on branch $branch is already up to date."
        return 0
    fi
    local message=${SITEGEN_HISTORY_MESSAGE:-"Record the eval run of $(git rev-parse --short HEAD 2>/dev/null || echo 'a build')"}
    if [ -n "$tip" ]; then
        commit=$(with_identity git commit-tree "$tree" -p "$tip" -m "$message")
    else
        commit=$(with_identity git commit-tree "$tree" -m "$message")
    fi
    if remote_git push --quiet "$remote" "$commit:refs/heads/$branch"; then
        echo "Recorded the run on branch $branch (commit ${commit:0:12})."
        return 0
    fi
    return 1
}

# Run a git command as the workflow's bot unless an identity is configured.
with_identity() {
    if [ -z "${GIT_AUTHOR_NAME:-}" ] && [ -z "$(git config user.name || true)" ]; then
        GIT_AUTHOR_NAME='github-actions[bot]' GIT_COMMITTER_NAME='github-actions[bot]' \
            GIT_AUTHOR_EMAIL='41898282+github-actions[bot]@users.noreply.github.com' \
            GIT_COMMITTER_EMAIL='41898282+github-actions[bot]@users.noreply.github.com' "$@"
    else
        "$@"
    fi
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
    read)
        [ $# -eq 1 ] || usage
        read_history "$1"
        ;;
    record)
        if [ $# -lt 4 ] || [ "$3" != "--" ]; then
            usage
        fi
        dir=$1 site_history=$2
        shift 3
        for ((attempt = 1; attempt <= attempts; attempt++)); do
            if [ "$attempt" -gt 1 ]; then
                echo "Another run recorded first: reading branch $branch again (attempt $attempt of $attempts)."
                sleep $((delay * (attempt - 1)))
            fi
            readable=true
            read_history "$dir" || readable=false
            if [ "$readable" = false ] && [ "$attempt" -gt 1 ]; then
                # This run's site, from the branch read before, is built: it stays, unrecorded.
                warn "this run was not recorded on branch $branch; re-run the job to record it"
                exit "$status"
            fi
            status=0
            if [ "$attempt" -eq 1 ]; then
                "$@" || status=$?
            else
                # The job summary already has this run's summary from the first build.
                GITHUB_STEP_SUMMARY='' "$@" || status=$?
            fi
            [ "$status" -eq 0 ] || exit "$status"
            if [ "$readable" = false ]; then
                # Pushed on top of nothing, it would stand for a history it never read: not recorded.
                warn "this run was not recorded on branch $branch, whose history could not be read"
                exit 0
            fi
            if [ ! -f "$site_history" ]; then
                warn "the build wrote no $site_history: this run was not recorded on branch $branch"
                exit 0
            fi
            if commit_and_push "$site_history" "$tip"; then
                exit 0
            fi
        done
        warn "could not push branch $branch after $attempts attempts: this run was not recorded; re-run the job to record it (nothing was lost: the branch keeps every recorded run)"
        exit "$status"
        ;;
    *)
        usage
        ;;
esac
