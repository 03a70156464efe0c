"""The preview's live reload: a build counter, a long-poll on it, and the script an open page polls with.

Only `sitegen serve --watch` serves the script and rewrites its pages to load it (docs/cli.md, "Previewing");
the built site never contains it, so what opens from file:// or Pages keeps its own CSP untouched.
"""

from __future__ import annotations

import html
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

SCRIPT_PATH = "/__sitegen_reload.js"
POLL_PATH = "/__sitegen_reload"
# A poll answers after this long at most, changed or not: no request is held open for ever.
POLL_SECONDS = 20.0
# How long closing waits for the polls it woke to send their answers (they do at once; this only bounds it).
CLOSE_GRACE_SECONDS = 2.0

# The page polls with the build it was served at and reloads when the server names another one. A failed poll
# (the server stopped) is retried: a server started again names a new build, and the page reloads then. A hidden
# tab does not poll (as in mkdocs): a browser opens only a few connections to one server at a time.
RELOAD_SCRIPT = """\
"use strict";
(function () {
  var served = document.currentScript.getAttribute("data-build");
  var pending = null; // the poll in flight (its AbortController) or the retry's timer
  function poll() {
    var controller = new AbortController();
    pending = controller;
    fetch("__POLL_PATH__?build=" + encodeURIComponent(served), { cache: "no-store", signal: controller.signal })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (build) {
        if (pending !== controller) { return; }
        if (build !== served) { window.location.reload(); } else { poll(); }
      })
      .catch(function () { if (pending === controller) { pending = window.setTimeout(poll, 2000); } });
  }
  function stop() {
    if (pending instanceof AbortController) { pending.abort(); } else if (pending !== null) { window.clearTimeout(pending); }
    pending = null;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { stop(); } else if (pending === null) { poll(); }
  });
  if (!document.hidden) { poll(); }
})();
""".replace("__POLL_PATH__", POLL_PATH).encode("utf-8")

_CSP_META = re.compile(rb'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(")', re.IGNORECASE)
# The pages' CSP has default-src 'none', which forbids the poll's fetch; 'self' is the preview server alone.
_CONNECT_SELF = html.escape("; connect-src 'self'").encode("ascii")


class BuildCounter:
    """The preview's builds, counted, for threads to wait on; closing it wakes every waiter at once."""

    def __init__(self) -> None:
        # Starts from the clock, so a page left open across a restart of the server sees a build it has not seen.
        self._value = time.time_ns() // 1_000_000
        self._closed = False
        self._answering = 0
        self._changed = threading.Condition()

    @property
    def value(self) -> str:
        """The current build, as pages carry it."""
        with self._changed:
            return str(self._value)

    def advance(self) -> None:
        """A new build is in place: wake every poll."""
        with self._changed:
            self._value += 1
            self._changed.notify_all()

    def wait_past(self, seen: str, timeout: float = POLL_SECONDS) -> str:
        """The current build once it is not `seen`, or after `timeout` seconds, or at once when closed."""
        with self._changed:
            self._changed.wait_for(lambda: str(self._value) != seen or self._closed, timeout)
            return str(self._value)

    @property
    def polls(self) -> int:
        """How many polls are waiting or being answered now."""
        with self._changed:
            return self._answering

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Around a poll's wait and answer: closing waits for the answer to be sent."""
        with self._changed:
            self._answering += 1
        try:
            yield
        finally:
            with self._changed:
                self._answering -= 1
                self._changed.notify_all()

    def close(self) -> None:
        """The server is stopping: every poll answers now (closing returns once they have), any later one at once."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._answering == 0, CLOSE_GRACE_SECONDS)


def with_reload_script(page: bytes, build: str) -> bytes:
    """A page as the preview serves it: it loads the reload script, and its CSP lets the script poll the server."""
    page = _CSP_META.sub(lambda match: match[1] + match[2] + _CONNECT_SELF + match[3], page, count=1)
    tag = f'<script src="{SCRIPT_PATH}" data-build="{html.escape(build)}"></script>'.encode("ascii")
    end = page.rfind(b"</body>")
    return page + tag if end < 0 else page[:end] + tag + page[end:]
