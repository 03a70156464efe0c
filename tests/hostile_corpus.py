"""A hostile suite: attack payloads in every field of cases and traces, and ids that attack file names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVIL = "https://evil.example"

# Each payload tries to run script, load a remote resource, redirect, or restyle the page.
PAYLOADS: list[str] = [
    "<script>alert('script')</script>",
    "<img src=x onerror=alert('img')>",
    "<svg onload=alert('svg')><circle r=40></circle></svg>",
    "<body onload=alert('body')>",
    "[click](javascript:alert('md-link'))",
    "[click](JaVaScRiPt:alert('md-link-case'))",
    "[click](java\tscript:alert('md-link-tab'))",
    "[click](&#106;avascript:alert('md-entity'))",
    "<javascript:alert('autolink')>",
    "[vb](vbscript:msgbox('vb'))",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgnZGF0YScpPC9zY3JpcHQ+)",
    "[ref][r]\n\n[r]: javascript:alert('ref-link')",
    f"![remote image]({EVIL}/pixel.png)",
    f"<img src=\"{EVIL}/raw.png\">",
    f"[external]({EVIL}/page)",
    f"<{EVIL}/autolink>",
    "</script><script>alert('breakout')</script>",
    "<!--<script>alert('comment')</script>-->",
    f"<base href=\"{EVIL}/\">",
    f"<meta http-equiv=\"refresh\" content=\"0;url={EVIL}\">",
    "<iframe srcdoc=\"<script>alert('srcdoc')</script>\"></iframe>",
    "<style>body{display:none !important}</style>",
    f"<link rel=stylesheet href=\"{EVIL}/x.css\">",
    "<div style=\"position:fixed;inset:0;background:red\">overlay</div>",
    "<form action=\"https://evil.example\"><button>go</button></form>",
    "{{ 7*7 }}{% for x in range(3) %}jinja{% endfor %}{# c #}",
    "${alert('template-literal')}",
    "\u2028\u2029</script>\u2028",
    "\"'><script>alert('attr')</script>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('mxss')>",
    "```html\n<script>alert('fenced')</script>\n```",
    "<a href=\"javascript:alert('raw-a')\">raw a</a>",
    "<object data=\"javascript:alert('object')\"></object>",
    "<embed src=\"javascript:alert('embed')\">",
    # Link tricks markdown-it must refuse however the scheme is spelt or wrapped.
    "[angle](<javascript:alert('md-angle')>)",
    "[colon](javascript&colon;alert('md-colon'))",
    "[hex](&#x6A;&#x61;vascript:alert('md-hex'))",
    "<&#x6a;avascript:alert('autolink-entity')>",
    "<JAVASCRIPT:alert('autolink-upper')>",
    "[nl](\njavascript:alert('md-newline'))",
    "[svg](data:image/svg+xml,<svg onload=alert('data-svg')>)",
    "![img-js](javascript:alert('img-js'))",
    "![img-data](data:image/png;base64,iVBORw0KGgo=)",
    "[proto-rel](//evil.example/x)",
    "[quote](https://evil.example/\"onmouseover=\"alert('quote'))",
    "[title](https://evil.example \"{{ 7*7 }}\" )",
    "[ref-upper][R2]\n\n[r2]: JavaScript:alert('ref-upper') \"t\"",
    "```\" onmouseover=\"alert('fence-info')\nbody\n```",
    # A table with aligned columns: markdown-it writes style="text-align", which must not reach the page.
    "| left | centre | right |\n|:--|:-:|--:|\n| <b>a</b> | b | c |",
    "<svg><use href=\"https://evil.example/sprite.svg#x\"/></svg>",
    "<video src=x onerror=alert('video')></video><audio src=x onerror=alert('audio')>",
    "<details open ontoggle=alert('toggle')>",
    "\u202eevil\u202c zero\u200bwidth",
]

HOSTILE_IDS: list[str] = [
    "../../escape",
    "/etc/passwd",
    "..",
    ".",
    "CON",
    "con.txt",
    "nul",
    "Com1.json",
    "a/b\\c",
    "Case-Sensitive",
    "case-sensitive",
    "caf\u00e9",  # NFC
    "cafe\u0301",  # NFD: same text to a person, another id
    "x" * 300,
    "ctrl\x00\x01\x1f\x7f",
    "<script>alert('id')</script>",
    "index",
    "assets",
    " leading and trailing ",
    "emoji-🔥-熔断",
]


def hostile_case(index: int, case_id: str, payload: str) -> dict[str, Any]:
    """A case whose every text field carries `payload`."""
    return {
        "id": case_id,
        "title": f"{payload} title",
        "question": f"{payload} question",
        "traceFixture": f"trace-{index}.json",
        "expectedRootCauseKeywords": ["script", payload, "alert"],
        "minKeywordMatches": 1,
        "requiredEvidenceTools": [payload, "query_logs"],
        "allowedVerdicts": ["PASS", payload],
        "forbiddenVerdicts": [payload],
        "forbiddenAnswerKeywords": [payload, "onerror"],
        "forbiddenConfirmedClaimKeywords": [payload],
        "requireV2AuditClosure": True,
        "requireClaimChecks": True,
        "requireComposerOutput": True,
        "expectedGatekeeperRuleSetVersion": payload,
        "degradedAnswerMarkers": [payload],
        "tags": [payload, f"matrix:{payload}"],
        "notes": payload,
        # Free annotations (a case may carry no other undefined field): shown on the case page.
        f"_{payload}": payload,
        f"x-{payload}": {payload: payload},
    }


def hostile_trace(payload: str, verdict: str) -> dict[str, Any]:
    """A trace whose every text field carries `payload`."""
    return {
        payload: payload,
        "session": {
            "answer": f"# {payload}\n\n{payload}\n\n- {payload}\n\n| a | b |\n|---|---|\n| {payload} | x |\n",
            "totalDurationMs": 1234,
            "selfEvaluation": {
                "executor_answer": payload,
                "verifier_evaluation": {
                    "verdict": verdict,
                    "tool_trace_summary": [{"tool_name": payload, "summary": payload}],
                    "gatekeeper_result": {"status": payload, "rule_set_version": payload, "violations": [payload]},
                    "claim_checks": [
                        {"claim_id": payload, "verification": payload, "detail": payload},
                        {"claim_id": "c2", "verification": "SUPPORTED", "detail": payload},
                        payload,
                    ],
                    "composer_output": {"mode": payload, "rendered": payload},
                },
            },
        },
        "toolInvocations": [
            {"toolName": payload, "success": True, "durationMs": 12, "input": {payload: payload}, "output": payload},
            {"toolName": "query_logs", "success": False, "durationMs": 7, "input": payload, "output": {"error": payload}},
        ],
    }


def write_hostile_suite(root: Path) -> tuple[Path, Path]:
    """Write the hostile case file and fixtures under `root`; return (cases path, fixtures dir)."""
    fixtures = root / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    cases = []
    count = max(len(PAYLOADS), len(HOSTILE_IDS))
    for index in range(count):
        payload = PAYLOADS[index % len(PAYLOADS)]
        case_id = HOSTILE_IDS[index] if index < len(HOSTILE_IDS) else f"payload-{index}-{payload}"
        cases.append(hostile_case(index, case_id, payload))
        verdict = ["PASS", "REJECT", payload, "LOW_CONFID"][index % 4]
        (fixtures / f"trace-{index}.json").write_text(json.dumps(hostile_trace(payload, verdict), ensure_ascii=False), encoding="utf-8")
    cases_path = root / "cases.json"
    cases_path.write_text(json.dumps(cases, ensure_ascii=False, indent=1), encoding="utf-8")
    return cases_path, fixtures


def hostile_baseline(case_ids: list[str]) -> dict[str, Any]:
    """A baseline report whose ids, verdicts, checks, tools and tags carry payloads (and cases gone since)."""
    results = []
    for index, case_id in enumerate(case_ids + [f"gone-{p}" for p in PAYLOADS[:6]]):
        payload = PAYLOADS[index % len(PAYLOADS)]
        results.append(
            {
                "caseId": case_id,
                "title": payload,
                "status": "passed" if index % 2 else "failed",
                "passed": bool(index % 2),
                "failedChecks": [] if index % 2 else [f"{payload}: {payload}", payload],
                "verdict": payload if index % 3 else "PASS",
                "matchedKeywordCount": index % 4,
                "requiredKeywordCount": 3,
                "evidenceCoverage": {payload: True, "query_logs": bool(index % 2)},
                "toolCallCount": index,
                "durationMs": 100 * index,
                "tags": [payload],
            }
        )
    return {"results": results}


def hostile_history(case_ids: list[str]) -> list[dict[str, Any]]:
    """Earlier runs whose ids, labels, times, commits, verdicts and case ids carry payloads."""
    runs = []
    for index, payload in enumerate(PAYLOADS[:8]):
        runs.append(
            {
                "runId": f"run-{index}-{payload}",
                "label": payload,
                "createdAt": payload if index % 2 else "2024-01-0%dT00:00:00Z" % (index + 1),
                "commit": payload if index % 3 else None,
                "totalCases": len(case_ids),
                "passedCases": index,
                "failedCases": len(case_ids) - index,
                "notRunCases": 0,
                "passRate": index / max(len(case_ids), 1),
                "averageToolCallCount": 2.0,
                "averageDurationMs": None if index % 2 else 1000.0,
                "verdictDistribution": {payload: 1, "PASS": index},
                "cases": {case_id: bool((index + n) % 2) for n, case_id in enumerate(case_ids)} | {payload: True},
                payload: payload,
            }
        )
    return runs


def write_hostile_site_inputs(root: Path) -> tuple[Path, Path, Path, Path]:
    """The hostile suite plus a hostile baseline and history; return (cases, fixtures, baseline, history)."""
    cases, fixtures = write_hostile_suite(root)
    ids = [case["id"] for case in json.loads(cases.read_text(encoding="utf-8"))]
    baseline = root / "baseline.json"
    baseline.write_text(json.dumps(hostile_baseline(ids), ensure_ascii=False), encoding="utf-8")
    history = root / "history.json"
    history.write_text(json.dumps(hostile_history(ids), ensure_ascii=False), encoding="utf-8")
    return cases, fixtures, baseline, history
