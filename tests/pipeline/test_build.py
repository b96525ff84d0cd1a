"""pipeline.build and `python -m pipeline build`: which cell gets built, the steps' typed
results, and usage errors.

The builds themselves run in `nox -s build` / `nox -s wheel` (they take
minutes); these tests cover the decisions around them, with the toolchain,
compile, repair and gate steps replaced where a test would otherwise compile.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import __main__ as cli
from pipeline import build, matrix
from pipeline.build import BuildError
from pipeline.rules import REPO, Variant
from pipeline.toolchain.cuda import Toolkit, find_toolkit

CPU_CELL = matrix.by_id("stable-cpu-x86_64")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pipeline", "build", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)


def must_not_run(*args, **kwargs):
    raise AssertionError(f"a build step ran: {args} {kwargs}")


# ---- the output directory -----------------------------------------------------------


def test_check_out_dir_creates_and_resolves(tmp_path: Path) -> None:
    out = build.check_out_dir(tmp_path / "a" / "wheelhouse")
    assert out.is_dir() and out == (tmp_path / "a" / "wheelhouse").resolve()
    assert list(out.iterdir()) == []  # the write test leaves nothing behind


@pytest.mark.parametrize("where", ["/proc/nope", "/proc/self/fd/nope/x"])
def test_check_out_dir_unwritable_is_a_build_error(where: str) -> None:
    with pytest.raises(BuildError, match=rf"--out {where}: cannot write there \("):
        build.check_out_dir(Path(where))


def test_check_out_dir_on_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(BuildError, match=r"cannot write there"):
        build.check_out_dir(tmp_path / "file")


def test_unwritable_out_fails_before_any_work(monkeypatch, capsys) -> None:
    monkeypatch.setattr(build, "build_cell", must_not_run)
    monkeypatch.setattr(build, "local_cell", must_not_run)
    assert cli.main(["build", "stable-cpu-x86_64", "--out", "/proc/nope"]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == "pipeline build: error: --out /proc/nope: cannot write there (No such file or directory)\n"
    )


def test_cli_a_torch_python_that_is_not_one_is_one_line(tmp_path: Path) -> None:
    out = run_cli("stable-cpu-x86_64", "--out", str(tmp_path), "--torch-python", "/proc/nope")
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr.endswith(
        "pipeline build: error: --torch-python /proc/nope: not an executable file\n"
    )
    assert "Traceback" not in out.stderr


def test_cli_unwritable_out_is_one_line_without_traceback() -> None:
    out = run_cli("--out", "/proc/nope")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("pipeline build: error: --out /proc/nope: cannot write there")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "args", [("--torch", "banana"), ("--cuda", "13.0", "--torch", "2.x", "--python", "3.11")]
)
def test_cli_bad_torch_version_is_one_line_exit_2(args) -> None:
    out = run_cli(*args)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("pipeline build: error: Invalid version: ")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


# ---- which cell ---------------------------------------------------------------------


def record_builds(monkeypatch) -> list:
    built = []

    def fake_build_cell(cell, out, *, check_reproducible=False, torch_python=None, torch_index):
        built.append((cell, out, check_reproducible, torch_python, torch_index))
        raise BuildError("stopped by the test")

    monkeypatch.setattr(build, "build_cell", fake_build_cell)
    return built


def test_a_cell_id_builds_that_cell(monkeypatch, tmp_path: Path, capsys) -> None:
    built = record_builds(monkeypatch)
    assert cli.main(["build", "classic-torch2.9-cu128-py3.12-x86_64", "--out", str(tmp_path)]) == 1
    assert [(c.id, out, given, index) for c, out, _, given, index in built] == [
        ("classic-torch2.9-cu128-py3.12-x86_64", tmp_path.resolve(), None, False)
    ]
    assert capsys.readouterr().err == "pipeline build: error: stopped by the test\n"


def test_a_request_finds_its_cell_and_keeps_the_requested_torch(
    monkeypatch, tmp_path: Path
) -> None:
    built = record_builds(monkeypatch)
    argv = [
        "build",
        "--cuda",
        "13.2",
        "--torch",
        "2.14.1",
        "--python",
        "3.12",
        "--out",
        str(tmp_path),
    ]
    assert cli.main([*argv, "--check-reproducible", "--torch-python", "/some/python"]) == 1
    ((cell, _, reproducible, given, index),) = built
    assert (given, index) == ("/some/python", False)
    # The stable cu132 cell is built against another torch in CI; locally the
    # request wins, so the gate checks the wheel against what was built.
    assert (cell.id, str(cell.torch), cell.python, reproducible) == (
        "stable-cu132-x86_64",
        "2.14.1",
        "3.12",
        True,
    )


def test_torch_index_reaches_the_build(monkeypatch, tmp_path: Path) -> None:
    built = record_builds(monkeypatch)
    assert cli.main(["build", "stable-cpu-x86_64", "--torch-index", "--out", str(tmp_path)]) == 1
    assert [(c.id, index) for c, _, _, _, index in built] == [("stable-cpu-x86_64", True)]


def test_a_classic_request(monkeypatch, tmp_path: Path) -> None:
    built = record_builds(monkeypatch)
    argv = ["--cuda", "13.0", "--torch", "2.11.0", "--python", "3.12", "--abi", "classic"]
    assert cli.main(["build", *argv, "--out", str(tmp_path)]) == 1
    cell = built[0][0]
    assert (cell.local_version, cell.torch_requirement) == ("cu130torch2.11", "==2.11.*")


def test_no_arguments_builds_this_machines_cell(monkeypatch, tmp_path: Path) -> None:
    built = record_builds(monkeypatch)
    monkeypatch.setattr(build, "local_cell", lambda: CPU_CELL)
    assert cli.main(["build", "--out", str(tmp_path)]) == 1
    assert built[0][0] == CPU_CELL


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["stable-cu999-x86_64"], "no cell 'stable-cu999-x86_64' in matrix.json; close: stable-"),
        (["--cuda", "11.8", "--torch", "2.14.1", "--python", "3.11"], "no matrix cell for abi=stable variant=cu118"),
        (["--cuda", "thirteen", "--torch", "2.14.1", "--python", "3.11"], "variant 'thirteen': expected 'cpu'"),
    ],
)  # fmt: skip
def test_unknown_cells_are_clear_errors(
    monkeypatch, tmp_path: Path, capsys, args, fragment
) -> None:
    monkeypatch.setattr(build, "build_cell", must_not_run)
    assert cli.main(["build", *args, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pipeline build: error: ") and fragment in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--cuda", "13.0"],
        ["--torch", "2.14.1", "--python", "3.11"],
        ["stable-cpu-x86_64", "--cuda", "cpu", "--torch", "2.14.1", "--python", "3.11"],
        ["--abi", "fast"],
    ],
)
def test_partial_requests_are_usage_errors(monkeypatch, tmp_path: Path, capsys, argv) -> None:
    monkeypatch.setattr(build, "build_cell", must_not_run)
    with pytest.raises(SystemExit) as info:
        cli.build_main([*argv, "--out", str(tmp_path)])
    assert info.value.code == 2
    assert "usage: pipeline build" in capsys.readouterr().err


def test_local_cell_follows_the_system_toolkit(monkeypatch) -> None:
    monkeypatch.setattr(build, "find_toolkit", lambda: None)
    monkeypatch.setattr(matrix, "this_platform", lambda: "linux_x86_64")
    assert build.local_cell() == CPU_CELL
    monkeypatch.setattr(build, "find_toolkit", lambda: Toolkit(Path("/x"), "13.2", "test"))
    assert build.local_cell().id == "stable-cu132-x86_64"


def test_local_cell_without_a_matrix_cell(monkeypatch) -> None:
    monkeypatch.setattr(build, "find_toolkit", lambda: Toolkit(Path("/x"), "11.8", "test"))
    with pytest.raises(
        BuildError, match=r"no stable cell in pipeline/matrix.json for cu118 on linux_"
    ):
        build.local_cell()


def test_local_cell_on_this_machine() -> None:
    toolkit = find_toolkit()
    variant = Variant.parse(toolkit.version) if toolkit else Variant(None)
    cells = matrix.select(
        matrix.expand(), abi="stable", variant=variant, platform=matrix.this_platform()
    )
    if not cells:  # e.g. a CUDA 13.1 toolkit: a cell must be named
        with pytest.raises(
            BuildError, match=f"no stable cell in pipeline/matrix.json for {variant}"
        ):
            build.local_cell()
        return
    cell = build.local_cell()
    assert cells == [cell]
    assert (cell.abi, cell.variant, cell.platform.name) == (
        "stable",
        variant,
        matrix.this_platform(),
    )


# ---- the steps and their typed results ---------------------------------------------------


class Report:
    def __init__(self, ok: bool) -> None:
        self.ok = ok

    def table(self) -> str:
        return f"gate table ok={self.ok}"


def fake_steps(
    monkeypatch, tmp_path: Path, *, gate_ok: bool = True, wheels: list[bytes] | None = None
):
    """Replace toolchain, compile+repair and gate; return what each step was called with."""
    calls: dict[str, list] = {"build_python": [], "build_env": [], "build_once": [], "verify": []}
    contents = iter(wheels or [b"wheel", b"wheel"])

    def build_python(torch, python, *, variant, given, torch_index, log):
        calls["build_python"].append((torch, python, variant, given, torch_index))
        return given or tmp_path / "venv" / "bin" / "python"

    def build_env(cell, *, log):
        calls["build_env"].append(cell.id)
        return {"FUSEDOPS_CELL": cell.id}

    def build_once(cell, python, env, out_dir):
        calls["build_once"].append((cell.id, python, env, out_dir))
        out_dir.mkdir(parents=True, exist_ok=True)
        wheel = out_dir / cell.wheel_filename("manylinux_2_28_x86_64")
        wheel.write_bytes(next(contents))
        return wheel, 12.0

    def verify(wheel, *, cell, smoke_python, log):
        calls["verify"].append((wheel, cell.id, smoke_python))
        return Report(gate_ok)

    monkeypatch.setattr(build, "build_python", build_python)
    monkeypatch.setattr(build, "build_env", build_env)
    monkeypatch.setattr(build, "build_once", build_once)
    monkeypatch.setattr(build.gate, "verify", verify)
    return calls


def test_build_cell_returns_the_gated_wheel(monkeypatch, tmp_path: Path, capsys) -> None:
    calls = fake_steps(monkeypatch, tmp_path)
    out = tmp_path / "wheelhouse"
    result = build.build_cell(CPU_CELL, out, log=lambda m: None)
    python = tmp_path / "venv" / "bin" / "python"
    assert calls["build_python"] == [
        (str(CPU_CELL.torch), CPU_CELL.python, CPU_CELL.variant, None, False)
    ]
    assert calls["build_env"] == [CPU_CELL.id]
    assert calls["build_once"] == [(CPU_CELL.id, python, {"FUSEDOPS_CELL": CPU_CELL.id}, out)]
    assert result.wheel == out / CPU_CELL.wheel_filename("manylinux_2_28_x86_64")
    assert calls["verify"] == [(result.wheel, CPU_CELL.id, python)]
    assert (result.cell, result.compile_seconds) == (CPU_CELL, 12.0)
    assert result.sha256 == hashlib.sha256(b"wheel").hexdigest()
    assert result.gate.ok and "gate table ok=True" in capsys.readouterr().out
    assert result.summary().startswith(f"{result.wheel}  (0.00 MB, compiled in 12s, sha256 ")


def test_build_cell_with_a_given_interpreter_builds_and_gates_in_it(
    monkeypatch, tmp_path: Path
) -> None:
    calls = fake_steps(monkeypatch, tmp_path)
    given = tmp_path / "session" / "bin" / "python"
    result = build.build_cell(CPU_CELL, tmp_path / "out", torch_python=given, log=lambda m: None)
    assert calls["build_python"] == [
        (str(CPU_CELL.torch), CPU_CELL.python, CPU_CELL.variant, given, False)
    ]
    assert calls["build_once"][0][1] == given
    assert calls["verify"] == [(result.wheel, CPU_CELL.id, given)]


def test_build_cell_fails_when_the_gate_does(monkeypatch, tmp_path: Path) -> None:
    fake_steps(monkeypatch, tmp_path, gate_ok=False)
    with pytest.raises(BuildError, match=r"fusedops-.*\.whl failed the verification gate"):
        build.build_cell(CPU_CELL, tmp_path / "out", log=lambda m: None)


def test_build_cell_checks_reproducibility(monkeypatch, tmp_path: Path) -> None:
    calls = fake_steps(monkeypatch, tmp_path, wheels=[b"one", b"one"])
    build.build_cell(CPU_CELL, tmp_path / "out", check_reproducible=True, log=lambda m: None)
    assert len(calls["build_once"]) == 2
    fake_steps(monkeypatch, tmp_path, wheels=[b"one", b"two"])
    with pytest.raises(
        BuildError, match=r"not reproducible: two builds of stable-cpu-x86_64 differ"
    ):
        build.build_cell(CPU_CELL, tmp_path / "out2", check_reproducible=True, log=lambda m: None)


def fake_python(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def test_compile_wheel_reports_a_failed_build(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(build, "clean_tree", lambda: None)  # the shared checkout's build/ stays
    python = fake_python(tmp_path / "python", "exit 3\n")
    with pytest.raises(BuildError, match=r"the build of stable-cpu-x86_64 failed \(exit 3\)"):
        build.compile_wheel(CPU_CELL, python, {}, tmp_path / "dist")


def test_compile_wheel_puts_the_interpreters_bin_first_on_path(monkeypatch, tmp_path: Path) -> None:
    """torch runs `ninja` from PATH; the env's own ninja is in its bin/."""
    monkeypatch.setattr(build, "clean_tree", lambda: None)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    python = fake_python(tmp_path / "env" / "bin" / "python", f'echo "$PATH" > {tmp_path}/path\n')
    with pytest.raises(BuildError, match=r"expected one wheel"):
        build.compile_wheel(CPU_CELL, python, {}, tmp_path / "dist")
    assert (tmp_path / "path").read_text() == f"{tmp_path / 'env' / 'bin'}:/usr/bin:/bin\n"


def test_compile_wheel_needs_exactly_one_wheel(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(build, "clean_tree", lambda: None)
    (tmp_path / "dist").mkdir()
    python = fake_python(tmp_path / "python", "exit 0\n")
    with pytest.raises(BuildError, match=r"expected one wheel, pip produced \[\]"):
        build.compile_wheel(CPU_CELL, python, {}, tmp_path / "dist")


def test_torch_lib_of_an_env_without_torch(tmp_path: Path) -> None:
    python = fake_python(tmp_path / "python", "echo 'No module named torch' >&2; exit 1\n")
    with pytest.raises(BuildError, match=r"has no torch: No module named torch"):
        build.torch_lib(python)
    assert build.torch_lib(Path(sys.executable)).name == "lib"


# ---- the pipeline's command line ----------------------------------------------------------


def test_unknown_command_prints_usage(capsys) -> None:
    assert cli.main([]) == 2
    assert cli.main(["frobnicate"]) == 2
    assert {"matrix", "build", "repair", "verify", "index", "cibw"} <= set(cli.COMMANDS)
    assert f"usage: python -m pipeline {{{','.join(cli.COMMANDS)}}}" in capsys.readouterr().err


def test_commands_dispatch(monkeypatch) -> None:
    import pipeline.matrix_cli
    import pipeline.repair

    seen = []
    monkeypatch.setattr(cli, "build_main", lambda argv: seen.append(("build", argv)) or 0)
    monkeypatch.setattr(
        pipeline.matrix_cli, "main", lambda argv: seen.append(("matrix", argv)) or 0
    )
    monkeypatch.setattr(pipeline.repair, "main", lambda argv: seen.append(("repair", argv)) or 0)
    assert (
        cli.main(["build", "x"])
        == cli.main(["matrix", "--github"])
        == cli.main(["repair", "w"])
        == 0
    )
    assert seen == [("build", ["x"]), ("matrix", ["--github"]), ("repair", ["w"])]
