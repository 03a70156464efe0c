"""View models of the site's pages: every string, URL, CSS class and percentage is computed here.

One module per page, its view model next to its helpers: `index_page` (index.html and the case list's
index-<n>.html, with assets/case-rows-<hash>.js for a long list's every row, its headline figures in `headline_stats`, its failures-by-rule panel in `rule_panel`), `case_page`
(cases/<slug>.html, its header figures in `case_facts`, its sections in `answer_view`, `evidence_table`,
`tool_timeline`, `verifier`, `then_and_now`, `trajectory_view`, `trial_cells` and `answer_diff`), `diff_page`
(diff.html), `history_page` (history.html and assets/history-data.js). Shared by them:
`common` (the page frame, links, figures), `badges`, `change_views` (a case's change in words), `charts` and
`chartsvg` (the charts and their static pictures), `search` (the index's search text), `text` (clipping untrusted
text to a budget). Values are formatted by sitegen.formatting, paths come from sitegen.site.html.urls.

Templates receive one of these objects' fields as their context (`page_context`) and only look up, loop
and branch. The view models are NamedTuples rather than dataclasses: immutable all the same, and a process
that builds pages imports them about 25 ms sooner (a dataclass is generated code, compiled at import). The
context keys of each template are these, and the tests check that each template gets exactly its own:

- index.html    layout, heading, subtitle, stats, charts, table, banner, rules
- case.html     layout, case_id, title, status, verdict, change, comparison, notes, annotations, tags, facts, pager, toc, checks,
                problem, question, answer, evidence, tools, verifier, baseline, definition, raw, trials
- diff.html     layout, heading, subtitle, banner, sections, nothing, suite, verdicts, downloads
- history.html  layout, heading, subtitle, charts, runs, steps
- case-list.html  layout, heading, subtitle, table, pages
"""

from __future__ import annotations

from sitegen.site.pages.case_page import Neighbour, PageInput, build_case_pages
from sitegen.site.pages.common import SiteInfo, page_context
from sitegen.site.pages.diff_page import build_diff_page
from sitegen.site.pages.history_page import build_history_page, history_data
from sitegen.site.pages.index_page import build_case_list_page, build_index_page, case_list_rows

__all__ = [
    "Neighbour",
    "PageInput",
    "SiteInfo",
    "build_case_list_page",
    "build_case_pages",
    "build_diff_page",
    "build_history_page",
    "build_index_page",
    "case_list_rows",
    "history_data",
    "page_context",
]
