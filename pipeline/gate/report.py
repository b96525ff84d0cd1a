"""What the gate returns: one CheckResult per check, gathered in a GateReport."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

PASS, FAIL, WARN, SKIP = "PASS", "FAIL", "WARN", "SKIP"


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str  # PASS | FAIL | WARN | SKIP; only FAIL fails the gate
    message: str

    @property
    def failed(self) -> bool:
        return self.status == FAIL


def result(name: str, problems: Sequence[str], ok_message: str) -> CheckResult:
    """FAIL with every problem joined, or PASS with ``ok_message``."""
    if problems:
        return CheckResult(name, FAIL, "; ".join(problems))
    return CheckResult(name, PASS, ok_message)


@dataclass(frozen=True)
class GateReport:
    wheel: Path
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.results)

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.results if r.failed)

    def get(self, name: str) -> CheckResult:
        """The result of check ``name`` (KeyError if the gate did not run it)."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check {name!r} in the report (ran: {[r.name for r in self.results]})")

    def table(self) -> str:
        return render_table(self.wheel.name, self.results)

    def to_dict(self) -> dict[str, object]:
        return {
            "wheel": str(self.wheel),
            "ok": self.ok,
            "results": [asdict(r) for r in self.results],
        }


def render_table(title: str, results: Sequence[CheckResult]) -> str:
    """The report as a fixed-width table; multi-line messages are indented."""
    width = max([len("CHECK")] + [len(r.name) for r in results])
    lines = [title, f"{'CHECK':<{width}}  STATUS  DETAIL", f"{'-' * width}  ------  ------"]
    for r in results:
        first, *rest = r.message.splitlines() or [""]
        lines.append(f"{r.name:<{width}}  {r.status:<6}  {first}")
        lines += [f"{'':<{width}}          {line}" for line in rest]
    failed = [r.name for r in results if r.failed]
    lines.append(f"verdict: {'FAIL (' + ', '.join(failed) + ')' if failed else 'PASS'}")
    return "\n".join(lines)


class GateInputError(ValueError):
    """The input is not something the gate can check (no such file, not a fusedops wheel)."""
