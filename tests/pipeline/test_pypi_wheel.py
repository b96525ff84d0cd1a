"""pipeline.pypi_wheel: one public wheel from per-family parts, and every way to feed it wrong parts."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import wheelkit as wk
from packaging.utils import parse_wheel_filename

from pipeline import pypi_wheel as pw

PLAT = "manylinux_2_28_x86_64"


def part(
    tmp: Path,
    variant: str,
    *,
    cuda: str | None = None,
    plat: str = PLAT,
    init: bytes = wk.PURE_TORCH_INIT,
    so: bytes = b"\x7fELF fake",
) -> Path:
    files = {
        "fusedops/__init__.py": init,
        "fusedops/_build_info.py": wk.build_info_source(
            version=f"0.1.0+{variant}", variant=variant, cuda=cuda
        ),
        "fusedops/_version.py": f"__version__ = '0.1.0+{variant}'\n".encode(),
        "fusedops/_C.abi3.so": so + variant.encode(),
    }
    return wk.write_wheel(tmp / variant, f"0.1.0+{variant}", f"cp310-abi3-{plat}", files)


def test_parts_become_one_public_wheel_with_a_library_per_family(tmp_path: Path) -> None:
    out = pw.assemble(
        [
            part(tmp_path, "cpu"),
            part(tmp_path, "cu130", cuda="13.0"),
            part(tmp_path, "cu128", cuda="12.8"),
        ],
        tmp_path / "out",
    )
    name, version, _, tags = parse_wheel_filename(out.name)
    assert name == "fusedops"
    assert (str(version), {str(t) for t in tags}) == ("0.1.0", {f"cp310-abi3-{PLAT}"})
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        info: dict = {}
        exec(zf.read("fusedops/_build_info.py"), {}, info)
        assert zf.read("fusedops/_lib/cu13/_C.abi3.so").endswith(b"cu130")
        record = zf.read("fusedops-0.1.0.dist-info/RECORD").decode()
        metadata = zf.read("fusedops-0.1.0.dist-info/METADATA").decode()
    assert {f"fusedops/_lib/{f}/_C.abi3.so" for f in ("cpu", "cu12", "cu13")} <= names
    assert "fusedops/_C.abi3.so" not in names
    assert info["BUILD_INFO"]["version"] == "0.1.0" and set(info["BUILD_INFO"]["variants"]) == {
        "cpu",
        "cu12",
        "cu13",
    }
    assert info["BUILD_INFO"]["variants"]["cu12"]["cuda"] == "12.8"
    assert "Version: 0.1.0\n" in metadata
    assert all(n in record for n in names)


def test_the_tag_is_the_strictest_part_promise(tmp_path: Path) -> None:
    older = part(tmp_path, "cpu", plat="manylinux_2_17_x86_64.manylinux2014_x86_64")
    newer = part(tmp_path, "cu130", cuda="13.0", plat="manylinux_2_27_x86_64.manylinux_2_28_x86_64")
    out = pw.assemble([older, newer], tmp_path / "out")
    assert out.name.endswith("-manylinux_2_27_x86_64.whl")


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda t: [part(t, "cpu"), part(t / "again", "cpu")], "two parts of one family"),
        (
            lambda t: [part(t, "cu130", cuda="13.0"), part(t, "cu132", cuda="13.2")],
            "two parts of one family",
        ),
        (
            lambda t: [part(t, "cpu"), part(t, "cu130", cuda="13.0", init=b"# other source\n")],
            "Python files differ",
        ),
        (lambda t: [part(t, "cpu", plat="linux_x86_64")], "not a repaired manylinux wheel"),
        (
            lambda t: [
                part(t, "cpu"),
                part(t, "cu130", cuda="13.0", plat="manylinux_2_28_aarch64"),
            ],
            "different machines",
        ),
        (lambda t: [], "no parts given"),
    ],
)
def test_wrong_parts_are_refused(tmp_path: Path, make, fragment: str) -> None:
    with pytest.raises(pw.AssemblyError, match=fragment):
        pw.assemble(make(tmp_path), tmp_path / "out")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_a_classic_or_public_wheel_is_not_a_part(tmp_path: Path) -> None:
    classic = wk.write_wheel(
        tmp_path, "0.1.0+cputorch2.9", f"cp312-cp312-{PLAT}", {"fusedops/_C.so": b"x"}
    )
    with pytest.raises(pw.AssemblyError, match="stable-ABI"):
        pw.read_part(classic)


def test_cli_answers_bad_input_in_one_line(tmp_path: Path, capsys) -> None:
    assert pw.main([str(tmp_path / "missing.whl"), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pipeline pypi-wheel: error: no such file") and "\n" not in err
