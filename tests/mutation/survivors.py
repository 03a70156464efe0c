"""List the surviving mutants of a cosmic-ray session: place, operator and the diff of each."""

from __future__ import annotations

import sqlite3
import sys


def survivors(session: str) -> list[tuple[str, int, str, str, int]]:
    """(module, line, operator, diff, occurrence) of every mutant the tests did not kill, in source order."""
    with sqlite3.connect(session) as db:
        return db.execute(
            "SELECT s.module_path, s.start_pos_row, s.operator_name, r.diff, s.occurrence FROM mutation_specs s "
            "JOIN work_results r ON r.job_id = s.job_id WHERE upper(r.test_outcome) = 'SURVIVED' "
            "ORDER BY s.start_pos_row, s.start_pos_col"
        ).fetchall()


if __name__ == "__main__":
    found = survivors(sys.argv[1])
    for module, line, operator, diff, _ in found:
        print(f"--- {module}:{line} {operator}")
        print("\n".join(l for l in diff.splitlines() if l.startswith(("+", "-")) and not l.startswith(("+++", "---"))))
    print(f"{len(found)} survived")
