"""Contract tests for the GitHub Actions workflows and the cibuildwheel settings.

They run on CPU, without network, and check what review tends to miss: every
job is bounded and least-privileged, every action is pinned to a commit, no
pull-request job can see a secret, every command a workflow runs exists (nox
sessions, scripts/*.py and `python -m pipeline` commands with --help), the
matrix feeds the build, nothing is published unless the GPU tests passed, the
release is a draft until everything else succeeded, and actionlint is clean.
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[2]
GITHUB = REPO / ".github"
WORKFLOW_DIR = GITHUB / "workflows"
NOXFILE = REPO / "noxfile.py"
PYPROJECT = REPO / "pyproject.toml"
CHECK_WORKFLOWS = REPO / "scripts" / "check_workflows.py"
SHELL_SCRIPTS = sorted((REPO / "pipeline").rglob("*.sh"))

REQUIRED_WORKFLOWS = ("ci.yml", "wheels.yml", "gpu-tests.yml", "release.yml")
WORKFLOWS = sorted(p.name for p in WORKFLOW_DIR.glob("*.y*ml"))
CIBW_COMMAND_KEYS = (
    "before-all",
    "before-build",
    "repair-wheel-command",
    "before-test",
    "test-command",
)
SHA = re.compile(r"[0-9a-f]{40}")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)\s*(?:#\s*(?P<comment>.*))?$")
VERSION_COMMENT = re.compile(r"^v\d+(\.\d+){0,2}\b")
# `python scripts/x.py`, `python {project}/scripts/ci/x.py`, `python3 -u ...`
PY_SCRIPT = re.compile(
    r"\bpython3?(?:\s+-[uIBE]+)*\s+(?:\{project\}/|\{package\}/|\$\{?GITHUB_WORKSPACE\}?/|\./)?"
    r"(?P<path>scripts/[\w./-]+\.py)\b"
)
SH_SCRIPT = re.compile(
    r"(?:\{project\}/|\$\{?GITHUB_WORKSPACE\}?/|\./|\b)(?P<path>scripts/[\w./-]+\.sh)\b"
)
# `python -m pipeline build ...`, `/opt/python/cp312-cp312/bin/python -m pipeline cibw before-all`
PIPELINE_CALL = re.compile(r"\bpython3?\s+-m\s+pipeline\s+(?P<path>[\w-]+)")
NOX_CALL = re.compile(r"\bnox\b(?P<args>[^\n;&|)]*)")
PUBLISHING_PERMISSIONS = {
    "contents": "write",
    "id-token": "write",
    "pages": "write",
    "attestations": "write",
}


# --- loading ------------------------------------------------------------------


@cache
def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((WORKFLOW_DIR / name).read_text())
    assert isinstance(data, dict), f"{name} is not a YAML mapping"
    return data


def triggers(workflow: Mapping[str, Any]) -> dict[str, Any]:
    """The `on:` mapping (PyYAML reads a bare `on` key as the boolean True)."""
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on or {})


def jobs(name: str) -> dict[str, dict[str, Any]]:
    return load(name).get("jobs") or {}


def steps(job: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps") or [])


def run_scripts(name: str) -> Iterator[tuple[str, str]]:
    """(job id, run script) for every `run:` step of workflow ``name``."""
    for job_id, job in jobs(name).items():
        for step in steps(job):
            if "run" in step:
                yield job_id, str(step["run"])


def local_calls(name: str) -> list[str]:
    """Workflows under .github/workflows that ``name`` calls as reusable workflows."""
    called = []
    for job in jobs(name).values():
        ref = job.get("uses", "")
        if ref.startswith("./.github/workflows/"):
            called.append(Path(ref).name)
    return called


def reachable(name: str) -> list[str]:
    """``name`` and every local workflow it calls, transitively."""
    seen: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.append(current)
            todo.extend(local_calls(current))
    return seen


def needs_of(job: Mapping[str, Any]) -> list[str]:
    needs = job.get("needs") or []
    return [needs] if isinstance(needs, str) else list(needs)


def transitive_needs(workflow: str, job_id: str) -> set[str]:
    all_jobs = jobs(workflow)
    found: set[str] = set()
    todo = needs_of(all_jobs[job_id])
    while todo:
        current = todo.pop()
        if current not in found:
            found.add(current)
            todo.extend(needs_of(all_jobs[current]))
    return found


def load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pytest itself depends on tomli before 3.11
        import tomli as tomllib
    return tomllib.loads(path.read_text())


def cibuildwheel_config() -> tuple[str, dict[str, Any]]:
    """[tool.cibuildwheel] from pyproject.toml."""
    return "pyproject.toml", load_toml(PYPROJECT)["tool"]["cibuildwheel"]


def cibuildwheel_commands() -> list[str]:
    _, table = cibuildwheel_config()
    commands: list[str] = []
    for key in CIBW_COMMAND_KEYS:
        value = table.get(key, [])
        commands.extend([value] if isinstance(value, str) else value)
    return commands


def command_sources() -> dict[str, list[str]]:
    """Text of every command a workflow or the cibuildwheel config runs, by source."""
    sources: dict[str, list[str]] = {}
    for name in WORKFLOWS:
        sources[name] = [script for _, script in run_scripts(name)]
    sources["cibuildwheel"] = cibuildwheel_commands()
    # nox sessions run `session.run("python", "-m", "pipeline", "<command>", ...)`.
    sources["noxfile.py"] = [
        f"python -m pipeline {m[1]}"
        for m in re.finditer(
            r'session\.run\(\s*"python",\s*"-m",\s*"pipeline",\s*"([\w-]+)"', NOXFILE.read_text()
        )
    ]
    return sources


def called(pattern: re.Pattern[str]) -> dict[str, list[str]]:
    """path -> sources that call it, for every match of ``pattern`` in any command."""
    found: dict[str, list[str]] = {}
    for source, commands in command_sources().items():
        for command in commands:
            for match in pattern.finditer(command):
                users = found.setdefault(match["path"], [])
                if source not in users:
                    users.append(source)
    return found


def nox_sessions_called() -> dict[str, list[str]]:
    """session name -> workflows that run `nox -s <session>`."""
    found: dict[str, list[str]] = {}
    for source, commands in command_sources().items():
        for command in commands:
            for match in NOX_CALL.finditer(command):
                args = match["args"].split(" -- ")[0]
                try:
                    words = shlex.split(args)
                except ValueError:  # unbalanced quotes in prose, not a command
                    words = args.split()
                for flag, value in itertools.pairwise(words):
                    if flag in ("-s", "-e", "--session", "--sessions"):
                        found.setdefault(value, []).append(source)
    return found


@cache
def noxfile_sessions() -> set[str]:
    """Session names of noxfile.py: `nox --list --json` when nox is importable, else
    the @nox.session functions (or their name=...) read with ast."""
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "--list", "--json", "-f", str(NOXFILE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if listed.returncode == 0:
        return {entry["name"] for entry in json.loads(listed.stdout)}
    tree = ast.parse(NOXFILE.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Attribute) and target.attr == "session":
                names.add(node.name)
                if isinstance(decorator, ast.Call):
                    for kw in decorator.keywords:
                        if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                            names.add(str(kw.value.value))
    return names


def uses_refs(name: str) -> list[str]:
    refs = []
    for job in jobs(name).values():
        if "uses" in job:
            refs.append(job["uses"])
        refs.extend(step["uses"] for step in steps(job) if "uses" in step)
    return refs


# --- every workflow -----------------------------------------------------------


def test_required_workflows_exist() -> None:
    missing = [n for n in REQUIRED_WORKFLOWS if not (WORKFLOW_DIR / n).is_file()]
    assert not missing, f"missing workflows: {missing}"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_workflow_parses(name: str) -> None:
    workflow = load(name)
    assert triggers(workflow), f"{name} has no `on:`"
    assert jobs(name), f"{name} has no jobs"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_top_level_permissions_are_empty(name: str) -> None:
    assert load(name).get("permissions", "absent") == {}, (
        f"{name}: top-level permissions must be {{}}"
    )


@pytest.mark.parametrize("name", WORKFLOWS)
def test_every_job_declares_permissions(name: str) -> None:
    missing = [job_id for job_id, job in jobs(name).items() if "permissions" not in job]
    assert not missing, f"{name}: jobs without their own `permissions:` {missing}"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_every_job_has_a_timeout(name: str) -> None:
    # A job that calls a reusable workflow cannot set timeout-minutes; the
    # called workflow's jobs are checked instead.
    missing = [
        job_id
        for job_id, job in jobs(name).items()
        if "uses" not in job and "timeout-minutes" not in job
    ]
    assert not missing, f"{name}: jobs without timeout-minutes {missing}"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_actions_are_pinned_to_commit_shas(name: str) -> None:
    problems = []
    for ref in uses_refs(name):
        if ref.startswith("./"):
            continue
        action, _, version = ref.partition("@")
        if ref.startswith("docker://") or not SHA.fullmatch(version) or action.count("/") < 1:
            problems.append(f"{ref}: not owner/repo@<40-hex SHA>")
    for number, line in enumerate((WORKFLOW_DIR / name).read_text().splitlines(), 1):
        match = USES_LINE.match(line)
        local = match is not None and match["ref"].startswith("./")
        if match and not local and not VERSION_COMMENT.match(match["comment"] or ""):
            problems.append(f"line {number}: {match['ref']} lacks a '# vX.Y.Z' comment")
    assert not problems, f"{name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", WORKFLOWS)
def test_checkout_does_not_persist_credentials(name: str) -> None:
    bad = [
        job_id
        for job_id, job in jobs(name).items()
        for step in steps(job)
        if str(step.get("uses", "")).startswith("actions/checkout@")
        and str((step.get("with") or {}).get("persist-credentials")).lower() != "false"
    ]
    assert not bad, f"{name}: checkout without persist-credentials: false in {bad}"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_run_scripts_do_not_interpolate_expressions(name: str) -> None:
    # ${{ }} inside run: is pasted into the script before bash sees it
    # (injection); values go through env: and are read as "$VAR".
    bad = [job_id for job_id, script in run_scripts(name) if "${{" in script]
    assert not bad, f"{name}: `${{{{ }}}}` inside run: in jobs {bad}; pass it through env:"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_no_pull_request_target(name: str) -> None:
    assert "pull_request_target" not in triggers(load(name)), (
        f"{name}: pull_request_target runs PR code with secrets"
    )


PR_WORKFLOWS = [n for n in WORKFLOWS if "pull_request" in triggers(load(n))]


def test_ci_is_a_pull_request_workflow() -> None:
    assert "ci.yml" in PR_WORKFLOWS


@pytest.mark.parametrize("name", PR_WORKFLOWS)
def test_pull_request_workflows_see_no_secrets(name: str) -> None:
    for reached in reachable(name):
        text = (WORKFLOW_DIR / reached).read_text()
        used = set(re.findall(r"\bsecrets\.([A-Za-z_][A-Za-z0-9_]*)", text)) - {"GITHUB_TOKEN"}
        assert not used, f"{name} -> {reached} uses secrets {sorted(used)}"
        assert "secrets: inherit" not in text, f"{name} -> {reached} passes secrets: inherit"


# --- commands the workflows run ---------------------------------------------


def _nox_params() -> list[Any]:
    return [pytest.param(s, users, id=s) for s, users in sorted(nox_sessions_called().items())]


@pytest.mark.parametrize(("session", "users"), _nox_params())
def test_nox_sessions_exist(session: str, users: list[str]) -> None:
    if not NOXFILE.is_file():
        pytest.skip(f"noxfile.py is absent: cannot check session {session!r} (run by {users})")
    sessions = noxfile_sessions()
    assert session in sessions, (
        f"`nox -s {session}` (in {users}) is not a session of noxfile.py: {sorted(sessions)}"
    )


def test_workflows_run_the_contract_sessions() -> None:
    called_sessions = set(nox_sessions_called())
    assert {"lint", "tests", "wheel", "index"} <= called_sessions, sorted(called_sessions)


def _script_params() -> list[Any]:
    return [pytest.param(p, users, id=p) for p, users in sorted(called(PY_SCRIPT).items())]


@pytest.mark.parametrize(("script", "users"), _script_params())
def test_called_python_scripts_exist_and_accept_help(script: str, users: list[str]) -> None:
    path = REPO / script
    if not path.is_file():
        pytest.skip(f"{script} does not exist yet (called by {', '.join(users)})")
    completed = subprocess.run(
        [sys.executable, str(path), "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, (
        f"{script} --help exited {completed.returncode}:\n{completed.stderr}"
    )
    assert "usage" in completed.stdout.lower(), (
        f"{script} --help printed no usage:\n{completed.stdout}"
    )


def test_called_scripts_are_found() -> None:
    # Guard the regex: the pipeline's known entry points must be seen.
    scripts = set(called(PY_SCRIPT))
    expected = {"scripts/matrix.py", "scripts/gpu_test.py"}
    assert expected <= scripts, f"not found in any command: {sorted(expected - scripts)}"


def _pipeline_params() -> list[Any]:
    return [pytest.param(c, users, id=c) for c, users in sorted(called(PIPELINE_CALL).items())]


@pytest.mark.parametrize(("command", "users"), _pipeline_params())
def test_called_pipeline_commands_exist_and_accept_help(command: str, users: list[str]) -> None:
    from pipeline.__main__ import COMMANDS

    assert command in COMMANDS, (
        f"`python -m pipeline {command}` ({users}) is no command: {COMMANDS}"
    )
    completed = subprocess.run(
        [sys.executable, "-m", "pipeline", command, "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0 and "usage" in completed.stdout.lower(), completed.stderr


def test_every_build_path_goes_through_python_m_pipeline() -> None:
    users = called(PIPELINE_CALL)
    # nox (local), cibuildwheel (container) and the release all build, repair,
    # verify and index through the one entry point.
    assert "noxfile.py" in users["build"], users
    assert "cibuildwheel" in users["repair"] and "cibuildwheel" in users["cibw"], users
    assert "release.yml" in users["release"] and "release.yml" in users["pypi-wheel"], users
    assert "release.yml" in nox_sessions_called()["index"]  # nox -s index -> pipeline index
    assert "wheels.yml" in users["cibw"], users


def _shell_params() -> list[Any]:
    # Every shell script the pipeline ships (cibw.py runs them), whoever calls it.
    users = called(SH_SCRIPT)
    return [
        pytest.param(
            str(p.relative_to(REPO)), users.get(str(p.relative_to(REPO)), ["pipeline"]), id=p.name
        )
        for p in SHELL_SCRIPTS
    ]


def test_the_pipeline_ships_its_shell_scripts() -> None:
    assert [p.name for p in SHELL_SCRIPTS] == ["install_cuda_nvidia_repo.sh"]


@pytest.mark.parametrize(("script", "users"), _shell_params())
def test_called_shell_scripts_exist_and_parse(script: str, users: list[str]) -> None:
    path = REPO / script
    assert path.is_file(), f"{script} (called by {users}) does not exist"
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env bash"), f"{script}: expected a bash shebang"
    assert "set -euo pipefail" in text, f"{script}: expected `set -euo pipefail`"
    assert os.access(path, os.X_OK), f"{script} is not executable (git mode 100755)"
    subprocess.run(["bash", "-n", str(path)], check=True)


# --- wheels.yml ---------------------------------------------------------------


def test_wheels_is_reusable_and_dispatchable() -> None:
    on = triggers(load("wheels.yml"))
    assert {"workflow_call", "workflow_dispatch"} <= set(on)
    assert "matrix-args" in on["workflow_call"]["inputs"]
    assert "matrix-args" in on["workflow_dispatch"]["inputs"]
    assert "matrix" in on["workflow_call"]["outputs"], "gpu-tests needs the built matrix"


def test_matrix_job_feeds_the_build_matrix() -> None:
    matrix_job = jobs("wheels.yml")["matrix"]
    build = jobs("wheels.yml")["build"]
    output = matrix_job["outputs"]["matrix"]
    step_id = re.fullmatch(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.matrix\s*\}\}", output)
    assert step_id, f"matrix job output is not a step output: {output}"
    generator = next(s for s in steps(matrix_job) if s.get("id") == step_id[1])
    assert "python scripts/matrix.py --github" in generator["run"]
    assert "inputs.matrix-args" in str(generator.get("env")), "inputs go through env:"
    assert "$GITHUB_OUTPUT" in generator["run"]

    assert "matrix" in needs_of(build)
    assert re.fullmatch(
        r"\$\{\{\s*fromJSON\(needs\.matrix\.outputs\.matrix\)\s*\}\}",
        str(build["strategy"]["matrix"]),
    ), build["strategy"]["matrix"]
    assert build["strategy"]["fail-fast"] is False
    assert re.fullmatch(r"\$\{\{\s*matrix\.runner\s*\}\}", build["runs-on"])


def test_build_runs_cibuildwheel_and_uploads_one_artifact_per_cell() -> None:
    build = jobs("wheels.yml")["build"]
    uses = [str(s.get("uses", "")) for s in steps(build)]
    assert any(u.startswith("pypa/cibuildwheel@") for u in uses)
    uploads = [
        s for s in steps(build) if str(s.get("uses", "")).startswith("actions/upload-artifact@")
    ]
    assert len(uploads) == 1
    assert re.fullmatch(r"wheel-\$\{\{\s*matrix\.id\s*\}\}", uploads[0]["with"]["name"])
    # The cell reaches cibuildwheel through the pipeline, never as loose YAML variables.
    exporter = next(s for s in steps(build) if "pipeline cibw env" in str(s.get("run", "")))
    assert "$GITHUB_ENV" in exporter["run"]
    assert not any(k.startswith("FUSEDOPS_CELL_") for k in build.get("env", {})), build["env"]


def test_cibuildwheel_config() -> None:
    source, table = cibuildwheel_config()
    assert table["build"].startswith("cp311-"), source
    assert "manylinux-x86_64-image" not in table, "the pinned image comes from the cell"
    assert set(table["environment-pass"]) >= {"FUSEDOPS_CELL", "SOURCE_DATE_EPOCH"}
    assert "python -m pipeline cibw before-all" in table["before-all"]
    assert "python -m pipeline cibw install-torch" in table["before-build"]
    assert "python -m pipeline cibw install-torch" in table["before-test"]
    assert "python -m pipeline repair {wheel} -w {dest_dir}" in table["repair-wheel-command"]
    assert "python -m pipeline cibw test {wheel}" in table["test-command"]
    assert table["build-frontend"]["args"] == ["--no-build-isolation"]


# --- gpu-tests.yml and release.yml --------------------------------------------


def test_gpu_tests_take_the_matrix_and_a_restricted_runner_group() -> None:
    on = triggers(load("gpu-tests.yml"))
    inputs = on["workflow_call"]["inputs"]
    assert {"matrix", "runner-group", "runner-labels"} <= set(inputs)
    assert '"gpu"' in inputs["runner-labels"]["default"]
    test = jobs("gpu-tests.yml")["test"]
    # Labels alone are no security boundary: a runner group restricted to this
    # repository picks the machine, and only trusted (non-PR, non-fork) runs get it.
    assert re.fullmatch(r"\$\{\{\s*inputs\.runner-group\s*\}\}", str(test["runs-on"]["group"]))
    assert "pull_request" in str(test["if"]) and "fork" in str(test["if"])
    assert test["permissions"] == {"contents": "read"}, "the GPU job must not be able to write"
    downloads = [
        s for s in steps(test) if str(s.get("uses", "")).startswith("actions/download-artifact@")
    ]
    assert any(
        re.fullmatch(r"wheel-\$\{\{\s*matrix\.id\s*\}\}", d["with"].get("name", ""))
        for d in downloads
    ), "gpu-tests must download the artifact wheels.yml uploads (wheel-<cell id>)"
    assert any(
        "python scripts/gpu_test.py dist/*.whl" in s for _, s in run_scripts("gpu-tests.yml")
    )


def test_gpu_tests_select_only_gpu_cells_at_each_test_torch() -> None:
    select = next(s for _, s in run_scripts("gpu-tests.yml") if "select(" in s)
    assert '.cuda != "cpu"' in select and ".platform == $platform" in select, select
    assert ".test_torch[]" in select, "stable wheels are tested at the floor and the build torch"
    install = next(s for s in steps(jobs("gpu-tests.yml")["test"]) if "venv" in str(s.get("run")))
    assert "matrix.test_torch" in str(install["env"]["CELL_TORCH"])
    assert (
        triggers(load("gpu-tests.yml"))["workflow_call"]["inputs"]["platform"]["default"]
        == "linux_x86_64"
    )


def test_self_hosted_gpu_runners_never_run_pull_requests() -> None:
    for name in WORKFLOWS:
        if "pull_request" in triggers(load(name)):
            assert "gpu-tests.yml" not in reachable(name), f"{name} runs PR code on the GPU runner"


def test_release_gpu_tests_need_the_wheels() -> None:
    release = jobs("release.yml")
    assert release["wheels"]["uses"] == "./.github/workflows/wheels.yml"
    assert release["gpu-tests"]["uses"] == "./.github/workflows/gpu-tests.yml"
    assert "wheels" in needs_of(release["gpu-tests"])
    assert "needs.wheels.outputs.matrix" in release["gpu-tests"]["with"]["matrix"]


def _publishing_jobs() -> dict[str, dict[str, Any]]:
    publishing = {}
    for job_id, job in jobs("release.yml").items():
        perms = job.get("permissions") or {}
        writes = any(perms.get(k) == v for k, v in PUBLISHING_PERMISSIONS.items())
        uses = " ".join(str(s.get("uses", "")) for s in steps(job))
        runs = " ".join(str(s.get("run", "")) for s in steps(job))
        publishes = any(
            a in uses for a in ("gh-action-pypi-publish", "deploy-pages", "upload-pages-artifact")
        )
        if writes or publishes or "gh release" in runs or job_id.startswith(("pages", "pypi")):
            publishing[job_id] = job
    return publishing


def test_release_publishes_only_after_gpu_tests() -> None:
    publishing = _publishing_jobs()
    assert {"github-release", "pages-deploy", "pypi-publish", "publish"} <= set(publishing), sorted(
        publishing
    )
    for job_id, job in publishing.items():
        assert {"wheels", "gpu-tests", "sdist"} <= transitive_needs("release.yml", job_id), job_id
        assert "gpu-tests" in transitive_needs("release.yml", job_id)
        assert "always()" not in str(job.get("if", "")), f"{job_id} would run after a failure"


def test_release_publishes_only_from_tags() -> None:
    on = triggers(load("release.yml"))
    assert on["push"]["tags"] == ["v*"] and "workflow_dispatch" in on
    for job_id, job in _publishing_jobs().items():
        assert "refs/tags/v" in str(job.get("if", "")), f"{job_id} could publish from a rehearsal"


def test_release_is_a_draft_until_everything_else_succeeded() -> None:
    release = jobs("release.yml")
    create = next(
        s for j, s in run_scripts("release.yml") if j == "github-release" and "gh release" in s
    )
    assert "gh release create" in create and "--draft" in create
    assert "gh release upload" in create and "--clobber" in create, "a re-run must overwrite"
    publish = release["publish"]
    assert "gh release edit" in str(steps(publish)) and "--draft=false" in str(steps(publish))
    assert {"pypi-publish", "pages-deploy", "github-release"} <= set(needs_of(publish))
    # nothing else flips the draft
    others = [s for j, s in run_scripts("release.yml") if j != "publish"]
    assert not any("--draft=false" in s for s in others)


def test_release_index_keeps_earlier_releases() -> None:
    build = next(
        s for j, s in run_scripts("release.yml") if j == "pages-build" and "nox -s index" in s
    )
    fetch = next(
        s
        for j, s in run_scripts("release.yml")
        if j == "pages-build" and "gh release download" in s
    )
    assert "gh release list" in fetch and "--exclude-drafts" in fetch
    # PEP 658 files ride along: the index advertises metadata only where it saw the file.
    assert "--pattern '*.whl'" in fetch and "--pattern '*.whl.metadata'" in fetch
    assert '--release "$TAG=dist"' in build and "history/*/" in build
    assert "shopt -s nullglob" in build  # the first release has no history: no literal '*'
    assert '--releases-url "$RELEASES_URL"' in build
    # The pipeline parses the same arguments the step passes (TAG=DIR, then OUT_DIR).
    from pipeline import index

    argv = ["--releases-url", "https://github.com/o/r/releases/download"]
    args = index.parse_args([*argv, "--release", "v0.1.0=.", "--release", "v0.0.9=.", "index"])
    assert [r.tag for r in args.release] == ["v0.1.0", "v0.0.9"] and str(args.out_dir) == "index"


def test_release_collects_through_the_pipeline() -> None:
    collect = next(s for j, s in run_scripts("release.yml") if j == "collect")
    assert "python -m pipeline release collect" in collect


def test_release_uses_trusted_publishing_and_attestations() -> None:
    release = jobs("release.yml")
    pypi = release["pypi-publish"]
    assert pypi["environment"]["name"] == "pypi"
    assert pypi["permissions"] == {"id-token": "write"}
    publish = next(s for s in steps(pypi) if "gh-action-pypi-publish" in str(s.get("uses", "")))
    assert "password" not in (publish.get("with") or {}), "trusted publishing needs no token"

    gh = release["github-release"]
    assert gh["permissions"] == {"contents": "write", "id-token": "write", "attestations": "write"}
    assert any("attest-build-provenance" in str(s.get("uses", "")) for s in steps(gh))
    assert any("sha256sum --check" in s for _, s in run_scripts("release.yml"))
    assert release["pages-deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert release["pages-deploy"]["environment"]["name"] == "github-pages"
    assert any(
        "python -m build --sdist" in s for j, s in run_scripts("release.yml") if j == "sdist"
    )
    pypi = next(s for j, s in run_scripts("release.yml") if j == "pypi-dist" and "pipeline" in s)
    # the one PyPI wheel: a library per family, gated and twine-checked before upload
    assert "python -m pipeline pypi-wheel --from dist" in pypi
    assert "python -m pipeline verify" in pypi and "twine check --strict" in pypi


# --- ci.yml -------------------------------------------------------------------


def test_ci_triggers_and_cancels_superseded_pr_runs() -> None:
    workflow = load("ci.yml")
    on = triggers(workflow)
    assert "pull_request" in on and on["push"]["branches"] == ["main"]
    concurrency = workflow["concurrency"]
    assert "pull_request" in str(concurrency["cancel-in-progress"])


def test_release_runs_are_never_cancelled() -> None:
    concurrency = load("release.yml").get("concurrency") or {}
    assert concurrency.get("cancel-in-progress", False) is False


def test_ci_status_job_is_the_single_required_check() -> None:
    ci = jobs("ci.yml")
    status = ci["status"]
    assert "always()" in str(status["if"])
    assert set(needs_of(status)) == set(ci) - {"status"}, "status must need every other job"
    script = next(s for j, s in run_scripts("ci.yml") if j == "status")
    assert "failure" in script and "cancelled" in script


def test_ci_tests_cover_python_3_10_to_3_13() -> None:
    tests = jobs("ci.yml")["tests"]
    assert tests["strategy"]["matrix"]["python"] == ["3.10", "3.11", "3.12", "3.13"]


def test_ci_runs_the_release_wheel_workflow_on_pull_requests() -> None:
    job = jobs("ci.yml")["release-path"]
    assert job["uses"] == "./.github/workflows/wheels.yml"
    ids = job["with"]["matrix-args"].split()[1::2]
    from pipeline import matrix

    cells = [matrix.by_id(i) for i in ids]
    assert any(c.abi == "stable" and not c.variant.is_cpu for c in cells), ids
    assert any(c.abi == "classic" for c in cells), ids


def test_ci_ccache_dir_is_the_one_the_pipeline_uses() -> None:
    job = jobs("ci.yml")["cuda-wheel"]
    cached = [
        s["with"]["path"]
        for s in steps(job)
        if "actions/cache@" in str(s.get("uses")) and "ccache" in str(s["with"]["key"])
    ]
    # The pipeline keeps a caller's CCACHE_DIR (pipeline/toolchain/compiler_cache.py).
    assert job["env"]["CCACHE_DIR"].endswith("/" + cached[0]), (job["env"], cached)


def test_ci_builds_a_cuda_13_wheel_with_caches() -> None:
    job = jobs("ci.yml")["cuda-wheel"]
    assert "--cuda 13.0" in job["env"]["MATRIX_ARGS"]
    keys = [
        str((s.get("with") or {}).get("key", ""))
        for s in steps(job)
        if "actions/cache@" in str(s.get("uses"))
    ]
    assert any(
        "ccache" in k and "hashFiles('csrc/**')" in k and "steps.cell.outputs.id" in k for k in keys
    ), keys
    assert any(k.startswith("pip-") for k in keys), keys


# --- repository configuration and actionlint --------------------------------


def test_dependabot_updates_actions() -> None:
    config = yaml.safe_load((GITHUB / "dependabot.yml").read_text())
    ecosystems = {u["package-ecosystem"] for u in config["updates"]}
    assert "github-actions" in ecosystems


def test_actionlint_knows_the_gpu_runner_labels() -> None:
    config = yaml.safe_load((GITHUB / "actionlint.yaml").read_text())
    labels = set(config["self-hosted-runner"]["labels"])
    default = yaml.safe_load(
        triggers(load("gpu-tests.yml"))["workflow_call"]["inputs"]["runner-labels"]["default"]
    )
    builtin = {"self-hosted", "linux", "x64"}
    assert set(default) - builtin <= labels, (
        f"add {sorted(set(default) - builtin - labels)} to actionlint.yaml"
    )


def test_actionlint_passes() -> None:
    sys.path.insert(0, str(CHECK_WORKFLOWS.parent))
    try:
        import check_workflows
    finally:
        sys.path.pop(0)
    actionlint = check_workflows.TOOLS["actionlint"]
    if check_workflows.find_tool(actionlint) is None:
        pytest.skip(f"actionlint is not installed: {actionlint.install}")
    completed = subprocess.run(
        [sys.executable, str(CHECK_WORKFLOWS), "--only", "actionlint"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
