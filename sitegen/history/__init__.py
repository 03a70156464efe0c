"""The run history: runs read, recorded in time order and kept; flaky cases; since when a case fails."""
