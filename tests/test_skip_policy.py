"""The CI skip policy of conftest.py: with CI=true a skip fails the run unless it is on ALLOWED_CI_SKIPS."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text(encoding="utf-8")
HELPERS = (Path(__file__).parent / "helpers.py").read_text(encoding="utf-8")  # conftest.py imports it
TESTS = """
import pytest

def test_runs():
    pass

def test_needs_a_tool():
    pytest.skip("the tool is not installed")

@pytest.mark.xfail(strict=True, reason="a known bug")
def test_known_bug():
    assert False
"""


@pytest.mark.parametrize(("ci", "allowed", "exit_code"), [("true", False, 1), ("", False, 0), ("true", True, 0)])
def test_a_skip_fails_a_ci_run_unless_allowed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str, allowed: bool, exit_code: int
) -> None:
    conftest = CONFTEST
    if allowed:
        conftest = conftest.replace(
            "ALLOWED_CI_SKIPS: dict[str, str] = {", 'ALLOWED_CI_SKIPS: dict[str, str] = {"test_policy.py::test_needs_a_tool": "why",'
        )
        assert conftest != CONFTEST
    pytester.makeconftest(conftest)
    pytester.makepyfile(helpers=HELPERS)
    pytester.makepyfile(test_policy=TESTS)
    monkeypatch.setenv("CI", ci)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == exit_code, result.stdout.str()
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    named = "test_policy.py::test_needs_a_tool: the tool is not installed" in result.stdout.str()
    assert named == (exit_code == 1)


def test_a_failing_run_keeps_its_exit_code(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(helpers=HELPERS)
    pytester.makepyfile(test_policy="import pytest\ndef test_skip():\n    pytest.skip('x')\ndef test_no():\n    assert False\n")
    monkeypatch.setenv("CI", "true")
    assert pytester.runpytest_subprocess("-p", "no:cacheprovider").ret == pytest.ExitCode.TESTS_FAILED
