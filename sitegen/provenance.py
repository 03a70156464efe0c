"""Where this copy of sitegen was released from: the release workflow (.github/workflows/release.yml) writes the
GitHub repository and the tag's commit here before it builds the distributions, so that `sitegen init` can pin the
action to the very commit the installed release came from (docs/releasing.md). Empty in a source tree."""

REPOSITORY = ""  # OWNER/REPO of the release
COMMIT = ""  # the full commit SHA of its tag
