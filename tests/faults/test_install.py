"""A damaged install: each fault is made on a copy of the installed package.

Before: a truncated extension killed the interpreter with SIGBUS (exit 135) in
`import fusedops` and in `python -m fusedops doctor`; a partial BUILD_INFO was a
KeyError; `doctor --verify` did not exist. Now each is an ImportError (or a
doctor PROBLEM) naming the file and the reinstall command.

The copy (package and dist-info, RECORD included) goes to a temporary
directory that comes first on PYTHONPATH of a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import fusedops
from fusedops import _compat, _record

INSTALLED_PACKAGE = Path(fusedops.__file__).resolve().parent
VERSION = fusedops.BUILD_INFO["version"]
# Where the loaded library lives in the package: the top level of a per-variant
# wheel, _lib/<family>/ in the PyPI wheel (which carries one per family).
LIBRARY_DIR = (
    Path("_lib", fusedops.BUILD_INFO["library"]) if "library" in fusedops.BUILD_INFO else Path()
)
REINSTALL = f'pip install --force-reinstall --no-deps "fusedops=={VERSION}"'


@dataclass
class Install:
    site: Path
    package: Path
    record: Path

    @property
    def library(self) -> Path:
        (lib,) = (self.package / LIBRARY_DIR).glob("_C*.so")
        return lib

    @property
    def library_in_record(self) -> str:
        """The library's path as RECORD and `doctor --verify` name it."""
        return self.library.relative_to(self.site).as_posix()

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(self.site)}
        # cwd=/ so that no source tree can shadow the copy.
        return subprocess.run(
            [sys.executable, *args], capture_output=True, text=True, env=env, cwd="/", check=False
        )

    def import_(self) -> subprocess.CompletedProcess[str]:
        return self.run(
            "-c",
            "import fusedops, pathlib, sys; "
            f"assert pathlib.Path(fusedops.__file__).is_relative_to({str(self.site)!r}); "
            "print('imported', fusedops.BUILD_INFO['version'])",
        )

    def doctor(self, *flags: str) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "fusedops", "doctor", *flags)


@pytest.fixture
def install(tmp_path: Path) -> Install:
    record = _record.find_record(VERSION)
    if record is None:
        pytest.skip("fusedops is not installed from a wheel (no RECORD next to the package)")
    site = tmp_path / "site"
    shutil.copytree(
        INSTALLED_PACKAGE, site / "fusedops", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(record.parent, site / record.parent.name)
    return Install(site, site / "fusedops", site / record.parent.name / "RECORD")


def assert_damaged(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 1 with fusedops's ImportError (not a signal), naming the fix."""
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    err = result.stderr
    assert "ImportError: fusedops is damaged: " in err, err[-2000:]
    assert f"fix: {REINSTALL}" in err
    assert "KeyError" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err[-2000:])


def test_intact_copy_imports_and_verifies(install: Install) -> None:
    result = install.import_()
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"imported {VERSION}"
    result = install.doctor("--verify")
    assert result.returncode == 0, result.stdout
    assert "result                 all match RECORD" in result.stdout
    assert "verdict: OK" in result.stdout


def test_verify_json(install: Install) -> None:
    result = install.doctor("--verify", "--json")
    report = json.loads(result.stdout)
    assert report["verify"]["record"] == str(install.record)
    assert report["verify"]["problems"] == []
    # every hashed file: the package's sources, the library and dist-info's files
    assert report["verify"]["checked"] >= len(list(install.package.glob("*.py"))) + 1


# ---- the compiled library ---------------------------------------------------------
@pytest.mark.parametrize(
    "keep",
    [
        pytest.param(lambda size: size // 2, id="half"),
        pytest.param(lambda size: size - 400, id="section-headers-only"),
        pytest.param(lambda size: 10, id="10-bytes"),
        pytest.param(lambda size: 0, id="empty"),
    ],
)
def test_truncated_library(install: Install, keep) -> None:
    """Was SIGBUS (exit 135) for `half`; the 400-byte cut imported silently."""
    library, size = install.library, install.library.stat().st_size
    new_size = keep(size)
    os.truncate(library, new_size)
    assert_damaged(
        install.import_(),
        f"its compiled library {library} is unusable",
        f"it is {new_size} bytes but the wheel's RECORD ({install.record}) says {size}",
    )


def test_truncated_library_doctor(install: Install) -> None:
    """The doctor ran into the same SIGBUS; now it reports the damage and the fix."""
    os.truncate(install.library, install.library.stat().st_size // 2)
    for flags in ((), ("--verify",)):
        result = install.doctor(*flags)
        assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
        assert "verdict: PROBLEM" in result.stdout
        assert "the library failed to load: fusedops is damaged" in result.stdout
        assert REINSTALL in result.stdout
    assert f"--verify: {install.library_in_record}: " in result.stdout
    assert "RECORD says" in result.stdout


@pytest.mark.parametrize(
    "keep, message",
    [
        (lambda size: size // 2, "it is cut short: a segment ends at byte"),
        (lambda size: size - 400, "it is cut short: its section headers end past"),
        (lambda size: 10, "it is cut short: 10 bytes is less than an ELF header"),
    ],
    ids=["half", "section-headers-only", "10-bytes"],
)
def test_truncated_library_without_record(install: Install, keep, message: str) -> None:
    """No RECORD to compare with (e.g. a copied package): the ELF check alone catches it."""
    shutil.rmtree(install.record.parent)
    os.truncate(install.library, keep(install.library.stat().st_size))
    result = install.import_()
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    assert "ImportError: fusedops is damaged: " in result.stderr
    assert message in result.stderr
    assert f"fix: {REINSTALL}" in result.stderr


def test_elf_check_on_the_real_library(tmp_path: Path) -> None:
    copy = tmp_path / "lib.so"
    shutil.copyfile(next((INSTALLED_PACKAGE / LIBRARY_DIR).glob("_C*.so")), copy)
    assert _record.elf_problem(copy) is None
    size = copy.stat().st_size
    for keep in (size - 1, size // 2, 100, 63):
        os.truncate(copy, keep)
        problem = _record.elf_problem(copy)
        assert problem is not None and problem.startswith("it is"), (keep, problem)
    copy.write_bytes(b"not a library")
    assert _record.elf_problem(copy) == "it is not an ELF shared library (13 bytes)"


def test_missing_library(install: Install) -> None:
    install.library.unlink()
    assert_damaged(
        install.import_(),
        f"its compiled library (_C*.so) is missing from {install.package / LIBRARY_DIR}",
    )


def test_library_not_in_record(install: Install) -> None:
    name = install.library_in_record
    lines = install.record.read_text().splitlines(keepends=True)
    install.record.write_text("".join(line for line in lines if not line.startswith(name + ",")))
    assert_damaged(install.import_(), "it is not listed in the installed wheel's RECORD")


def test_unreadable_record(install: Install) -> None:
    install.record.write_text("fusedops/__init__.py,sha256=abc\n")
    assert_damaged(
        install.import_(), "the wheel's RECORD is unreadable", "expected 'path,hash,size'"
    )


def test_same_size_tamper_found_by_verify(install: Install) -> None:
    """Import checks sizes only (cheap); a same-size change is for `doctor --verify`."""
    library = install.library
    data = bytearray(library.read_bytes())
    data[5000] ^= 0xFF
    library.write_bytes(bytes(data))
    result = install.doctor("--verify")
    assert result.returncode == 1
    assert f"--verify: {install.library_in_record}: sha256 differs from RECORD" in result.stdout
    assert f"fix: {REINSTALL}" in result.stdout


# ---- doctor --verify on the other files ---------------------------------------------
def test_verify_finds_a_modified_python_file(install: Install) -> None:
    with (install.package / "ops.py").open("a") as f:
        f.write("# local edit\n")
    result = install.doctor("--verify")
    assert result.returncode == 1
    assert "--verify: fusedops/ops.py: " in result.stdout and "RECORD says" in result.stdout


def test_verify_finds_a_missing_file(install: Install) -> None:
    (install.package / "doctor.py").rename(install.site / "elsewhere.py")
    # doctor.py is the doctor itself: check through the module the CLI does not need.
    result = install.run(
        "-c",
        "from fusedops import _record; "
        "print(_record.verify(_record.read_record(_record.find_record())))",
    )
    assert "fusedops/doctor.py: missing" in result.stdout, result.stderr[-2000:]


def test_verify_finds_an_unlisted_file(install: Install) -> None:
    """A second copy of the library (e.g. left from another build) is not from the wheel."""
    stray = install.library.with_name("_C_stale.so")
    shutil.copyfile(install.library, stray)
    result = install.doctor("--verify")
    assert result.returncode == 1
    stray_in_record = stray.relative_to(install.site).as_posix()
    assert f"--verify: {stray_in_record}: not listed in RECORD" in result.stdout


def test_verify_without_record(install: Install) -> None:
    shutil.rmtree(install.record.parent)
    result = install.doctor("--verify")
    assert result.returncode == 1
    assert "RECORD                 not found" in result.stdout
    assert "nothing to verify against" in result.stdout


# ---- the build info -------------------------------------------------------------------
@pytest.mark.parametrize(
    "content, message",
    [
        (
            f"BUILD_INFO = {{'version': {VERSION!r}}}",
            "is incomplete: missing torch, cuda, abi, arch_list",
        ),
        (
            f"BUILD_INFO = {{'version': {VERSION!r}, 'torch': 2.14, 'cuda': None, 'abi': 'stable', "
            "'arch_list': []}",
            "is incomplete: wrong type for torch",
        ),
        ("BUILD_INFO = []", "is not a dict"),
        ("BUILD_INFO = {", "cannot be read (SyntaxError: "),
        ("OTHER = 1", "is missing or has no BUILD_INFO"),
    ],
    ids=["partial", "wrong-type", "not-a-dict", "syntax-error", "no-BUILD_INFO"],
)
def test_damaged_build_info(install: Install, content: str, message: str) -> None:
    """A partial BUILD_INFO was a KeyError in import and in the doctor."""
    (install.package / "_build_info.py").write_text(content + "\n")
    assert_damaged(install.import_(), message)
    result = install.doctor()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "KeyError" not in result.stderr
    assert "verdict: PROBLEM" in result.stdout and message in result.stdout


def test_missing_build_info(install: Install) -> None:
    """The wheel ships _build_info.py: its absence is damage, not a source tree."""
    (install.package / "_build_info.py").unlink()
    assert_damaged(install.import_(), "_build_info.py is missing or has no BUILD_INFO")


def test_source_tree_without_build(install: Install) -> None:
    shutil.rmtree(install.record.parent)
    (install.package / "_build_info.py").unlink()
    result = install.import_()
    assert result.returncode == 1
    assert "fusedops has no build info: it was imported from a source tree" in result.stderr


# ---- importing again -------------------------------------------------------------------
def test_second_import_after_a_failed_one(install: Install) -> None:
    os.truncate(install.library, 1000)
    result = install.run(
        "-c",
        "errors = []\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        import fusedops\n"
        "    except ImportError as err:\n"
        "        errors.append(str(err))\n"
        "assert len(errors) == 2 and errors[0] == errors[1], errors\n"
        "print(errors[0].splitlines()[0])",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("fusedops is damaged: its compiled library")


def test_second_import_and_reload(install: Install) -> None:
    """import twice, importlib.reload every module: the ops stay registered and right."""
    code = """
import importlib, torch
import fusedops, fusedops.ops, fusedops._loader, fusedops._formulas, fusedops.doctor
import fusedops as again
assert again is fusedops
for module in (fusedops, fusedops.ops, fusedops._loader, fusedops._formulas, fusedops.doctor,
               fusedops.ops, fusedops):
    importlib.reload(module)
x = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
w = torch.randn(8, dtype=torch.float64, requires_grad=True)
ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
torch.testing.assert_close(fusedops.rms_norm(x, w), ref)
torch.testing.assert_close(torch.ops.fusedops.rms_norm(x, w), ref)
assert torch.autograd.gradgradcheck(fusedops.rms_norm, (x, w))
assert torch.autograd.gradgradcheck(torch.ops.fusedops.silu_and_mul, (x,))
torch.library.opcheck(torch.ops.fusedops.rms_norm.default, (x, w, 1e-6))
y = torch.compile(fusedops.rms_norm, fullgraph=True)(x, w)
torch.testing.assert_close(y, ref)
print("ok", fusedops.BUILD_INFO["version"])
"""
    result = install.run("-c", code)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == f"ok {VERSION}"


# ---- the reinstall command ---------------------------------------------------------------
@pytest.mark.parametrize(
    "version, command",
    [
        (
            "0.1.0+cu130",
            '"fusedops==0.1.0+cu130" --index-url https://fusedops.github.io/fusedops/cu130',
        ),
        (
            "0.1.0+cu130torch2.9",
            '"fusedops==0.1.0+cu130torch2.9" --index-url https://fusedops.github.io/fusedops/cu130',
        ),
        ("0.1.0+cpu", '"fusedops==0.1.0+cpu" --index-url https://fusedops.github.io/fusedops/cpu'),
        ("0.1.0", '"fusedops==0.1.0"'),
        (None, "fusedops"),
    ],
)
def test_reinstall_command(monkeypatch, version: str | None, command: str) -> None:
    monkeypatch.delenv("FUSEDOPS_INDEX_URL", raising=False)
    assert (
        _compat.reinstall_command(version) == f"pip install --force-reinstall --no-deps {command}"
    )
