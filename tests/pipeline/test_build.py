"""scripts/build_wheel.py: which cell gets built, and its usage errors.

The builds themselves run in `nox -s build` / `nox -s wheel` (they take
minutes); these tests cover the decisions in front of them.
"""

from __future__ import annotations

import build_wheel
import pytest


def test_request_finds_its_cell_and_keeps_the_requested_torch() -> None:
    cell = build_wheel.requested_cell("13.2", "2.14.1", "3.11", "stable")
    assert cell["variant"] == "cu132" and cell["abi"] == "stable"
    # The stable cu132 cell is built against another torch in CI; locally the
    # request wins, so the gate checks the wheel against what was built.
    assert (cell["torch"], cell["python"]) == ("2.14.1", "3.11")


def test_classic_request() -> None:
    cell = build_wheel.requested_cell("13.0", "2.11.0", "3.12", "classic")
    assert cell["local_version"] == "cu130torch2.11"
    assert cell["torch_requirement"] == "==2.11.*"


def test_unknown_cell_is_a_clear_error() -> None:
    with pytest.raises(build_wheel.BuildError, match=r"2\.3"):
        build_wheel.requested_cell("13.0", "2.3.0", "3.11", "classic")


def test_local_cell_follows_the_system_toolkit(monkeypatch) -> None:
    monkeypatch.setattr(build_wheel, "find_toolkit", lambda: None)
    assert build_wheel.local_cell()["cuda"] == "cpu"


@pytest.mark.parametrize(
    "argv",
    [["--cuda", "13.0"], ["--torch", "2.14.1", "--python", "3.11"], ["--abi", "fast"]],
)
def test_partial_requests_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_wheel.parse_args(argv)
    assert info.value.code == 2


def test_main_reports_a_missing_cell(capsys) -> None:
    assert build_wheel.main(["--cuda", "11.8", "--torch", "2.14.1", "--python", "3.11"]) == 1
    assert "build_wheel: error:" in capsys.readouterr().err
