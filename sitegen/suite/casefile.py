"""The suite's cases as a build uses them: every case's id, trace fixture and definition key up front, its
validated Case only when its page has to be rendered.

A case file that is text for text the one this same sitegen validated for the previous build (the build
status keeps a digest of both) is not validated again: on a rebuild of a big suite, validating every case
would cost more than everything else that stayed the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitegen.plumbing.inputfiles import InputFile
from sitegen.plumbing.jsontext import identity, loads
from sitegen.suite import loading
from sitegen.suite.models import Case


@dataclass
class CaseList:
    """The cases of the case file, in order."""

    raw: list[dict[str, Any]]  # each case as parsed from the file
    _cases: list[Case | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self._cases:
            self._cases = [None] * len(self.raw)
        self.ids: list[str] = [item["id"] for item in self.raw]

    def __len__(self) -> int:
        return len(self.raw)

    def fixture(self, index: int) -> str:
        """The case's traceFixture."""
        return self.raw[index]["traceFixture"]

    def definition_key(self, index: int) -> bytes:
        """Bytes that change whenever the case's definition does (as parsed, so a reordered file counts as changed)."""
        return identity(self.raw[index])

    def case(self, index: int) -> Case:
        """The validated case (validated now if the file was trusted)."""
        case = self._cases[index]
        if case is None:
            case = self._cases[index] = Case.model_validate(self.raw[index])
        return case


def read_case_list(path: Path, file: InputFile, trusted: bool) -> CaseList:
    """The case list of the case file as read; validated unless `trusted` (validated before, unchanged since)."""
    if trusted:
        return CaseList(loads(file.data))
    parsed = loading.load_case_file(path, file.text)
    return CaseList(parsed.raw, parsed.cases)
