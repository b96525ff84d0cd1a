"""pipeline/elf.py: DT_NEEDED read with the standard library, and the private-libstdc++ fault.

Real components: libraries linked here by g++, with the shared C++ runtime and
with `-static-libstdc++` (what a GCC without its shared libstdc++ produces: the
fault that segfaulted a wheel built on a GPU machine at its first error message),
compared with what readelf reads from the same files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import wheelkit as wk

from pipeline.elf import ElfReadError, UnsupportedElf, dt_needed, private_libstdcxx_problem
from pipeline.gate import native
from pipeline.gate.report import FAIL, PASS

# An error message built the way csrc/ops/ops.h builds one: a stream and an integer.
SOURCE = """
#include <sstream>
#include <stdexcept>
extern "C" void fail_with(long n) {
  std::ostringstream s;
  s << "expected weight to have shape [" << n << "]";
  throw std::runtime_error(s.str());
}
"""


def compile_here(compiler: str, src: Path, source: str, out: Path, *flags: str) -> Path:
    """`compiler flags src -o out`; the test skips where this machine cannot build it."""
    path = shutil.which(compiler)
    if path is None:
        pytest.skip(f"{compiler} is not installed")
    src.write_text(source)
    if subprocess.run([path, *flags, str(src), "-o", str(out)], check=False).returncode != 0:
        pytest.skip(f"{compiler} {' '.join(flags)} cannot build here (e.g. no static library)")
    return out


def link(tmp_path: Path, name: str, *flags: str) -> Path:
    return compile_here(
        "g++", tmp_path / "fail.cpp", SOURCE, tmp_path / name, "-shared", "-fPIC", "-O2", *flags
    )


def test_shared_runtime_is_read_like_readelf_and_passes(tmp_path: Path) -> None:
    so = link(tmp_path, "shared.so")
    needed = dt_needed(so)
    assert needed == wk.readelf_needed(so)
    assert "libstdc++.so.6" in needed
    assert private_libstdcxx_problem(needed) is None
    assert native.check_linked_libs({"fusedops/_C.abi3.so": needed}).status == PASS


def test_static_runtime_is_refused_by_the_build_check_and_the_gate(tmp_path: Path) -> None:
    so = link(tmp_path, "static.so", "-static-libstdc++")
    needed = dt_needed(so)
    assert needed == wk.readelf_needed(so)
    assert "libstdc++.so.6" not in needed
    problem = private_libstdcxx_problem(needed)
    assert problem is not None and "linked into it statically" in problem
    gate = native.check_linked_libs({"fusedops/_C.abi3.so": needed})
    assert gate.status == FAIL and "does not link libstdc++.so.6" in gate.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a library at all", "does not start with the ELF magic number"),
        (b"", "does not start with the ELF magic number"),
    ],
    ids=["text", "empty"],
)
def test_not_an_elf_file(tmp_path: Path, content: bytes, message: str) -> None:
    bogus = tmp_path / "bogus.so"
    bogus.write_bytes(content)
    with pytest.raises(ElfReadError, match=message):
        dt_needed(bogus)


@pytest.mark.parametrize(
    ("ident", "what"), [(b"\x01\x01", "32-bit"), (b"\x02\x02", "big-endian")], ids=str
)
def test_other_elf_classes_are_unsupported_not_refused(
    tmp_path: Path, ident: bytes, what: str
) -> None:
    """setup.py skips the check for these (a build on s390x must not stop); others stop."""
    other = tmp_path / f"{what}.so"
    other.write_bytes(b"\x7fELF" + ident + bytes(58))
    with pytest.raises(UnsupportedElf, match="not a 64-bit little-endian ELF file"):
        dt_needed(other)


def test_no_needed_entries_at_all_is_refused(tmp_path: Path) -> None:
    """A C++ extension that needs nothing carries its runtime itself."""
    leaf = "int leaf(int x) { return x + 1; }\n"
    so = compile_here(
        "gcc", tmp_path / "leaf.c", leaf, tmp_path / "leaf.so", "-shared", "-fPIC", "-nostdlib"
    )
    assert dt_needed(so) == wk.readelf_needed(so) == []
    assert private_libstdcxx_problem([]) is not None


def test_cut_short_inside_the_headers(tmp_path: Path) -> None:
    so = link(tmp_path, "shared.so")
    cut = tmp_path / "cut.so"
    cut.write_bytes(so.read_bytes()[:80])
    with pytest.raises(ElfReadError, match="cut short inside its headers"):
        dt_needed(cut)


def test_a_static_executable_has_no_dynamic_section(tmp_path: Path) -> None:
    main = "int main(void) { return 0; }\n"
    exe = compile_here("gcc", tmp_path / "main.c", main, tmp_path / "main", "-static")
    with pytest.raises(ElfReadError, match="no dynamic section"):
        dt_needed(exe)
