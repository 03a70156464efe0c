"""Keep every n-th mutant of a cosmic-ray session (in source order), for a run too long to do whole."""

from __future__ import annotations

import sqlite3
import sys


def keep_every(session: str, every: int) -> tuple[int, int]:
    """Drop all but every `every`-th pending mutant of `session`; (kept, total)."""
    with sqlite3.connect(session) as db:
        rows = db.execute(
            "SELECT job_id FROM mutation_specs ORDER BY start_pos_row, start_pos_col, operator_name, occurrence"
        ).fetchall()
        dropped = [(job,) for index, (job,) in enumerate(rows) if index % every]
        db.executemany("DELETE FROM mutation_specs WHERE job_id = ?", dropped)
        db.executemany("DELETE FROM work_items WHERE job_id = ?", dropped)
    return len(rows) - len(dropped), len(rows)


if __name__ == "__main__":
    kept, total = keep_every(sys.argv[1], int(sys.argv[2]))
    print(f"sample: {kept} of {total} mutants (every {sys.argv[2]}th in source order)")
