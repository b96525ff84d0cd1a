"""Faults in the pipeline's input: tampered wheels for the gate, bad wheels for the index, bad CLI args.

Each test makes one fault and asserts the exact outcome: which gate check fails
with which message (and that nothing else does), or the one-line error and exit
status of the CLI. No traceback anywhere.
"""

from __future__ import annotations

import hashlib
import re
import sys
import zipfile
from pathlib import Path

import pytest

from pipeline import gate, index, matrix, repair
from pipeline.gate.report import GateReport

# The wheel-making helper of the pipeline tests (gcc-built .so, proper RECORD).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipeline"))
import wheelkit as wk

CPU = matrix.by_id("stable-cpu-x86_64")
INIT = "fusedops/__init__.py"


def quiet(_line: str) -> None:
    pass


def gate_report(wheel: Path) -> GateReport:
    return gate.verify(wheel, cell=CPU, smoke=False, log=quiet)


def only_failure(report: GateReport, check: str, message: str) -> None:
    """``check`` is the one FAIL and its message is exactly ``message``."""
    assert report.failed == (check,), report.table()
    assert report.get(check).message == message


@pytest.fixture(scope="module")
def good_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repaired stable CPU wheel that passes every check of the gate."""
    root = tmp_path_factory.mktemp("faults")
    torch_lib = wk.fake_torch_lib(root)
    so = wk.gcc(
        wk.LIMITED_EXT_C,
        root / "build" / "_C.abi3.so",
        wk.link_args(torch_lib, "libc10.so", "libtorch_cpu.so"),
    )
    files = wk.package_files(so, wk.build_info_source())
    raw = wk.write_wheel(root / "raw", "0.1.0+cpu", "cp310-abi3-linux_x86_64", files)
    env = repair.auditwheel_env(torch_lib)
    wheel = repair.run_auditwheel_repair(raw, root / "good", "manylinux_2_17_x86_64", env)
    assert gate_report(wheel).ok, gate_report(wheel).table()
    return wheel


def tampered(good: Path, tmp_path: Path, **changes: object) -> Path:
    return wk.rewrite_wheel(good, tmp_path / good.name, **changes)  # type: ignore[arg-type]


def read(wheel: Path, member: str) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(member)


# --- the gate: RECORD --------------------------------------------------------------------
# Before: the gate never read RECORD, so each of these wheels passed it.


def test_python_file_differs_from_record_same_size(good_wheel: Path, tmp_path: Path) -> None:
    source = read(good_wheel, INIT)
    edited = source.replace(b"eps=1e-6", b"eps=1e-5")  # same length, different code
    assert len(edited) == len(source) and edited != source
    report = gate_report(tampered(good_wheel, tmp_path, replace={INIT: edited}))
    only_failure(report, "record", f"sha256 differs from RECORD: {INIT}")


def test_python_file_differs_from_record_in_size(good_wheel: Path, tmp_path: Path) -> None:
    edited = read(good_wheel, INIT) + b"\nimport os\n"
    report = gate_report(tampered(good_wheel, tmp_path, replace={INIT: edited}))
    size = len(read(good_wheel, INIT))
    only_failure(
        report,
        "record",
        f"sha256 differs from RECORD: {INIT}; "
        f"size differs from RECORD: {INIT} ({size} in RECORD, {len(edited)} in the wheel)",
    )


def test_file_not_in_record(good_wheel: Path, tmp_path: Path) -> None:
    wheel = tampered(good_wheel, tmp_path, add=[("fusedops/evil.py", b"import os\n")])
    only_failure(gate_report(wheel), "record", "not in RECORD: fusedops/evil.py")


def test_file_in_record_but_missing(good_wheel: Path, tmp_path: Path) -> None:
    wheel = tampered(good_wheel, tmp_path, drop=["fusedops/_build_info.py"])
    report = gate_report(wheel)
    # BUILD_INFO is gone too, so build-info and identity's BUILD_INFO cross-check say so.
    assert report.get("record").message == (
        "in RECORD but not in the wheel: fusedops/_build_info.py"
    )
    assert report.failed == ("record", "build-info"), report.table()


def test_same_path_twice_in_zip(good_wheel: Path, tmp_path: Path) -> None:
    wheel = tampered(good_wheel, tmp_path, add=[(INIT, b"import os\n")])
    only_failure(
        gate_report(wheel),
        "record",
        f"zip holds the same path more than once: {INIT}; sha256 differs from RECORD: {INIT}; "
        f"size differs from RECORD: {INIT} ({len(read(good_wheel, INIT))} in RECORD, 10 in the wheel)",
    )


# --- the gate: extension modules -----------------------------------------------------------


def test_second_copy_of_the_extension(good_wheel: Path, tmp_path: Path) -> None:
    # Before: PASS; the loader would load whichever _C*.so sorts first.
    so = read(good_wheel, "fusedops/_C.abi3.so")
    copy = "fusedops/_C.cpython-311-x86_64-linux-gnu.so"
    wheel = tampered(good_wheel, tmp_path, add=[(copy, so)], update_record=True)
    only_failure(
        gate_report(wheel),
        "extensions",
        f"2 extension modules (fusedops/_C.abi3.so, {copy}); "
        r"expected one module matching ^fusedops/_C\.abi3\.so$",
    )


def test_truncated_extension(good_wheel: Path, tmp_path: Path) -> None:
    # Before: pyelftools' ELFError escaped as a traceback. A truncated .so with a
    # RECORD that matches it (a broken build, not a tampered wheel) is a FAIL.
    cut = read(good_wheel, "fusedops/_C.abi3.so")[:4096]
    wheel = tampered(good_wheel, tmp_path, replace={"fusedops/_C.abi3.so": cut}, update_record=True)
    report = gate_report(wheel)
    assert report.failed == ("auditwheel", "linked-libs", "abi3audit"), report.table()
    why = "Reading section 0 at offset"
    assert report.get("auditwheel").message.startswith(
        f"auditwheel show failed: elftools.common.exceptions.ELFParseError: {why}"
    )
    assert report.get("linked-libs").message == (
        "_C.abi3.so is cut short inside its headers: not a readable ELF file"
    )
    assert report.get("abi3audit").message.startswith(f"abi3audit exit 1: ELFParseError: {why}")


# --- the gate: name and version across filename, METADATA and BUILD_INFO --------------------


def test_metadata_version_differs(good_wheel: Path, tmp_path: Path) -> None:
    (meta,) = [n for n in zipfile.ZipFile(good_wheel).namelist() if n.endswith("/METADATA")]
    text = read(good_wheel, meta).replace(b"Version: 0.1.0+cpu", b"Version: 0.1.1+cpu")
    wheel = tampered(good_wheel, tmp_path, replace={meta: text}, update_record=True)
    only_failure(
        gate_report(wheel), "identity", "METADATA Version 0.1.1+cpu != filename version 0.1.0+cpu"
    )


def test_metadata_name_differs(good_wheel: Path, tmp_path: Path) -> None:
    (meta,) = [n for n in zipfile.ZipFile(good_wheel).namelist() if n.endswith("/METADATA")]
    text = read(good_wheel, meta).replace(b"Name: fusedops", b"Name: fusedops-nightly")
    wheel = tampered(good_wheel, tmp_path, replace={meta: text}, update_record=True)
    only_failure(
        gate_report(wheel), "identity", "METADATA Name is 'fusedops-nightly', not fusedops"
    )


def test_build_info_version_differs(good_wheel: Path, tmp_path: Path) -> None:
    info = wk.build_info_source(version="0.2.0+cpu")
    wheel = tampered(
        good_wheel, tmp_path, replace={"fusedops/_build_info.py": info}, update_record=True
    )
    only_failure(
        gate_report(wheel), "identity", "BUILD_INFO version 0.2.0+cpu != filename version 0.1.0+cpu"
    )


# --- the gate's CLI: one line, exit 2, before any check runs --------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Before: exit 1 after a table with one FAIL row.
        (["{tmp}/fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_17_x86_64.whl"], "wheel not found: "),
        # Before: the gate ran and failed every check on a name it could not parse.
        (["{tmp}/fusedops.whl"], "fusedops.whl: not a wheel filename ("),
        (
            ["{tmp}/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"],
            "manylinux_2_28_x86_64.whl: a wheel of 'torch', not fusedops",
        ),
        (["{tmp}/fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl"], "is not a zip file"),
        (
            ["{good}", "--cell", "stable-cu999-x86_64"],
            "--cell: no cell 'stable-cu999-x86_64' in matrix.json",
        ),
        (
            ["{good}", "--smoke-python", "{tmp}/python9"],
            "--smoke-python {tmp}/python9: no such executable",
        ),
        (
            ["{good}", "--expect-archs", "sm_80"],
            "--expect-archs: arch 'sm_80': expected a form like",
        ),
        (["{good}", "--max-size-mb", "-1"], "--max-size-mb -1: must be positive"),
        (
            ["{good}", "--max-size-mb", "lots"],
            "argument --max-size-mb: invalid float value: 'lots'",
        ),
        (["{good}", "--json-out", "{tmp}/no/dir/r.json"], "its directory does not exist"),
        (["{good}", "--no-smoke", "--smoke-python", "{py}"], "not allowed with argument"),
        (["{good}", "--cell-json", "{{}}"], "unrecognized arguments: --cell-json"),
    ],
)
def test_verify_cli_bad_arguments(
    args: list[str],
    message: str,
    good_wheel: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"PK")
    (tmp_path / "fusedops.whl").write_bytes(b"PK")
    (tmp_path / "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl").write_bytes(b"junk")
    fill = {"tmp": str(tmp_path), "good": str(good_wheel), "py": sys.executable}
    assert gate.main([a.format(**fill) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no check ran, no table
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    assert captured.err.startswith("pipeline verify: error: ")
    assert message.format(**fill) in captured.err


# --- the index --------------------------------------------------------------------------------


def _wheel(out: Path, version: str, marker: str) -> Path:
    files = {INIT: f"BUILT = {marker!r}\n".encode()}
    return wk.write_wheel(out, version, "cp310-abi3-linux_x86_64", files)


def _linked(page: Path) -> dict[str, str]:
    return dict(re.findall(r'href="([^"#]+)#sha256=([0-9a-f]+)"', page.read_text()))


def test_index_replaces_a_changed_wheel_of_the_same_size(tmp_path: Path) -> None:
    # Before: the copy was skipped when the sizes matched, so the page linked the new
    # sha256 next to the old file and pip refused it ("THESE PACKAGES DO NOT MATCH").
    wheels, out = tmp_path / "wheels", tmp_path / "index"
    first = _wheel(wheels, "0.1.0+cpu", "build-A")
    old_bytes = first.read_bytes()
    index.build_index(wheels, out)
    second = _wheel(wheels, "0.1.0+cpu", "build-B")  # same name, same size, other content
    assert second == first and len(second.read_bytes()) == len(old_bytes)
    assert second.read_bytes() != old_bytes
    result = index.build_index(wheels, out)
    copy = out / "cpu" / "fusedops" / first.name
    assert result.copied == (copy,) and result.unchanged == ()
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert digest == hashlib.sha256(second.read_bytes()).hexdigest()
    assert set(_linked(out / "cpu" / "fusedops" / "index.html").values()) == {digest}
    # A third run finds the same content and copies nothing.
    again = index.build_index(wheels, out)
    assert again.copied == () and again.unchanged == (copy,)


@pytest.mark.parametrize(
    ("filename", "message"),
    [
        # Before: anything not named fusedops-*.whl was silently left out of the index.
        (
            "torch-2.14.1-cp311-cp311-linux_x86_64.whl",
            "torch-2.14.1-cp311-cp311-linux_x86_64.whl: a wheel of 'torch', not fusedops",
        ),
        ("fusedops-latest.whl", "fusedops-latest.whl: not a wheel filename"),
        # Before: accepted and filed under cu130 next to +cu130 (PEP 440 lower-cases it).
        (
            "fusedops-0.1.0+CU130-cp310-abi3-linux_x86_64.whl",
            "fusedops-0.1.0+CU130-cp310-abi3-linux_x86_64.whl: '0.1.0+CU130' differs only by"
            " case from the canonical '0.1.0+cu130'",
        ),
        # Before: accepted as its own directory, rocm6.4/.
        (
            "fusedops-0.1.0+rocm6.4-cp310-abi3-linux_x86_64.whl",
            "fusedops-0.1.0+rocm6.4-cp310-abi3-linux_x86_64.whl: local version +rocm6.4 names no"
            " variant",
        ),
    ],
)
def test_index_refuses_wheels_it_did_not_make(
    filename: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheels, out = tmp_path / "wheels", tmp_path / "index"
    _wheel(wheels, "0.1.0+cu130", "ok")
    (wheels / filename).write_bytes(b"PK")
    assert index.main([str(wheels), str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"pipeline index: error: {message}"), err
    assert not out.exists()  # nothing is written until every wheel is accepted
