#!/usr/bin/env python3
"""The verification gate: every fusedops wheel passes it before it leaves a build.

    python scripts/verify_wheel.py WHEEL [--cell-json JSON | --cell-file F]
        [--no-smoke] [--python PY] [--torch-spec SPEC] [--pip-args ARGS]
        [--smoke-python PATH] [--expect-archs "7.5 8.0 ..."] [--max-size-mb N]
        [--json-out FILE]

Each check is a small function over text or data (testable without a GPU or a
CUDA build); the I/O around them (unzipping, cuobjdump, auditwheel, abi3audit,
the smoke environment) lives in ``verify``. The report is a table; the exit
status is 1 when any check FAILs. WARN and SKIP never fail the gate.

The smoke test installs the wheel with --no-deps next to a torch and runs the
three ops on CPU against torch reference math. By default it builds a fresh venv
(``--python``, default this interpreter) and pip-installs ``--torch-spec`` into
it (default ``torch==<cell torch>``; add e.g. ``--pip-args "--index-url
https://download.pytorch.org/whl/cu130"`` or ``"--no-index --find-links DIR"``).
``--smoke-python PATH`` reuses an interpreter that already has torch: the wheel
is installed with ``--target`` into a temp dir put first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import ast
import email.message
import email.parser
import fnmatch
import importlib.util
import json
import os
import re
import shlex
import shutil
import site
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version
from repair_wheel import INSTALL_HINT, TORCH_CUDA_EXCLUDES, auditwheel_env, auditwheel_show

# --- data -------------------------------------------------------------------

PASS, FAIL, WARN, SKIP = "PASS", "FAIL", "WARN", "SKIP"

BUILD_INFO_KEYS = ("version", "torch", "cuda", "abi", "arch_list", "git_sha", "variant")
STABLE_PYTHON_TAG = "cp310"  # CPython limited API 3.10, the stable-ABI floor
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
PYPI_SIZE_LIMIT_MB = 100.0
SMOKE_TIMEOUT_S = 600  # PyPI's default per-file upload limit

# Libraries torch or the driver provide; a copy inside our wheel is always a bug.
# auditwheel renames grafted copies (libcudart-1a2b3c4d.so.13), so match prefixes.
VENDORED_PREFIXES = (
    "libtorch",
    "libc10",
    "libshm",
    "libcudart",
    "libnvrtc",
    "libcublas",
    "libcudnn",
    "libnccl",
    "libpython3",
)
_LIBCUDA_RE = re.compile(r"^libcuda[.-]")  # the driver, not libcudart/libcudnn
CUDA_NEEDED_RE = re.compile(r"^(libcudart|libcuda\.|libnvrtc|libc10_cuda|libtorch_cuda)")

CUOBJDUMP_HINT = (
    "pip install nvidia-cuda-cuobjdump (it lands in site-packages/nvidia/cu13/bin), "
    "or set $CUOBJDUMP / put a CUDA toolkit's bin on PATH"
)
ABI3AUDIT_HINT = "pip install abi3audit"

# fatbin container layout (little endian): header magic, then entries whose
# headers carry kind (1 PTX, 2 ELF), payload size, arch, flags and, when the
# payload is compressed, its uncompressed size.
FATBIN_MAGIC = 0xBA55ED50
FATBIN_COMPRESSED_FLAGS = 0x2000 | 0x8000  # legacy LZ4 bit, CUDA 12.8+/13 bit


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str
    message: str

    @property
    def failed(self) -> bool:
        return self.status == FAIL


@dataclass
class Report:
    wheel: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.results)

    def get(self, name: str) -> CheckResult:
        return next(r for r in self.results if r.name == name)

    def table(self) -> str:
        return render_table(self.wheel, self.results)

    def to_dict(self) -> dict[str, object]:
        return {"wheel": self.wheel, "ok": self.ok, "results": [asdict(r) for r in self.results]}


@dataclass(frozen=True)
class FatbinSummary:
    elf_entries: int = 0
    ptx_entries: int = 0
    compressed_entries: int = 0
    stored_bytes: int = 0
    uncompressed_bytes: int = 0


# --- pure checks --------------------------------------------------------------


def _result(name: str, problems: Sequence[str], ok_message: str) -> CheckResult:
    if problems:
        return CheckResult(name, FAIL, "; ".join(problems))
    return CheckResult(name, PASS, ok_message)


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


def split_wheel_filename(filename: str) -> tuple[Version, frozenset[Tag]]:
    """Version and tags of a wheel filename (``InvalidWheelFilename`` if malformed)."""
    _, version, _, tags = parse_wheel_filename(filename)
    return version, tags


def policy_glibc(platform: str) -> tuple[int, int] | None:
    """(2, 28) for manylinux_2_28_x86_64 / legacy aliases; None for anything else."""
    m = re.match(r"^manylinux_(\d+)_(\d+)_", platform)
    if m:
        return int(m.group(1)), int(m.group(2))
    return LEGACY_MANYLINUX.get(platform.split("_x86_64")[0].split("_aarch64")[0])


def check_platform_tag(filename: str) -> CheckResult:
    """The filename must carry a manylinux tag: a bare linux_* wheel is unrepaired."""
    name = "platform-tag"
    try:
        _, tags = split_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        return CheckResult(name, FAIL, f"not a valid wheel filename: {exc}")
    platforms = sorted({t.platform for t in tags})
    bad = [p for p in platforms if policy_glibc(p) is None]
    if bad:
        hint = (
            " (unrepaired: run scripts/repair_wheel.py)" if any("linux" in p for p in bad) else ""
        )
        return CheckResult(name, FAIL, f"platform tag {', '.join(bad)} is not manylinux{hint}")
    return CheckResult(name, PASS, ", ".join(platforms))


def is_torch_or_cuda_lib(soname: str) -> bool:
    """True for libraries that torch / the driver provide (what repair excludes)."""
    return any(fnmatch.fnmatch(soname, pattern) for pattern in TORCH_CUDA_EXCLUDES)


def check_auditwheel(show: Mapping[str, object], filename: str) -> CheckResult:
    """``auditwheel show --json`` must agree with the filename's manylinux tag.

    show has no --exclude, so torch's libraries appear as external; those are
    expected. Any other external library means repair did not graft it.
    """
    name = "auditwheel"
    if show.get("error"):
        return CheckResult(name, FAIL, f"auditwheel show: {show['error']}")
    try:
        _, tags = split_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        return CheckResult(name, FAIL, f"not a valid wheel filename: {exc}")
    claims = [g for g in (policy_glibc(t.platform) for t in tags) if g is not None]
    problems: list[str] = []
    sym_tag = str(show.get("sym_tag") or "")
    needed = policy_glibc(sym_tag)
    if not claims:
        problems.append("the filename claims no manylinux policy")
    elif needed is None:
        problems.append(f"symbol versions fit no manylinux policy (auditwheel: {sym_tag!r})")
    elif min(claims) < needed:
        claim = "manylinux_{}_{}".format(*min(claims))
        problems.append(f"tag claims {claim} but symbols need {sym_tag} (glibc too new)")
    if show.get("unsupported_isa"):
        problems.append("uses ISA extensions that manylinux does not allow")
    external = sorted(dict(show.get("external_libs") or {}))  # type: ignore[call-overload]
    ungrafted = [lib for lib in external if not is_torch_or_cuda_lib(lib)]
    if ungrafted:
        problems.append(f"needs libraries neither in the wheel nor from torch: {ungrafted}")
    provided = [lib for lib in external if is_torch_or_cuda_lib(lib)]
    detail = f"consistent with its tag (symbols need {sym_tag})"
    if provided:
        detail += f"; from torch at run time: {', '.join(provided)}"
    return _result(name, problems, detail)


def vendored_libraries(names: Iterable[str]) -> list[str]:
    """Archive members that are copies of torch/CUDA libraries."""
    found = []
    for member in names:
        base = member.rsplit("/", 1)[-1]
        if ".so" not in base:
            continue
        if base.startswith(VENDORED_PREFIXES) or _LIBCUDA_RE.match(base):
            found.append(member)
    return sorted(found)


def check_no_vendored(names: Iterable[str]) -> CheckResult:
    found = vendored_libraries(names)
    if found:
        return CheckResult(
            "no-vendored-libs",
            FAIL,
            f"wheel ships torch/CUDA libraries (they must come from torch): {', '.join(found)}"
            " -- repair with scripts/repair_wheel.py, which excludes them",
        )
    return CheckResult("no-vendored-libs", PASS, "no torch/CUDA libraries inside")


def _cell_python_tag(cell: Mapping[str, object] | None) -> str | None:
    if not cell or not cell.get("python"):
        return None
    major, minor = str(cell["python"]).split(".")[:2]
    return f"cp{major}{minor}"


def expected_abi(cell: Mapping[str, object] | None, build_info: Mapping | None) -> str | None:
    if cell and cell.get("abi"):
        return str(cell["abi"])
    if build_info and build_info.get("abi"):
        return str(build_info["abi"])
    return None


def parse_wheel_tags(wheel_text: str) -> set[str]:
    """``Tag:`` lines of a WHEEL file."""
    return {
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    }


def check_tags(
    filename: str,
    cell: Mapping[str, object] | None,
    build_info: Mapping | None = None,
    wheel_text: str | None = None,
) -> CheckResult:
    """cp310-abi3 for stable wheels, cpXY-cpXY (the cell's Python) for classic ones."""
    name = "wheel-tags"
    try:
        _, tags = split_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        return CheckResult(name, FAIL, f"not a valid wheel filename: {exc}")
    pairs = sorted({f"{t.interpreter}-{t.abi}" for t in tags})
    problems: list[str] = []
    abi = expected_abi(cell, build_info)
    want_py = _cell_python_tag(cell)
    if abi == "stable":
        if pairs != [f"{STABLE_PYTHON_TAG}-abi3"]:
            problems.append(
                f"stable-ABI wheel must be tagged {STABLE_PYTHON_TAG}-abi3, got {pairs}"
            )
    elif abi == "classic":
        want = [f"{want_py}-{want_py}"] if want_py else None
        if any(p.split("-")[0] != p.split("-")[1] or "abi3" in p for p in pairs):
            problems.append(f"classic wheel must be tagged cpXY-cpXY, got {pairs}")
        elif want and pairs != want:
            problems.append(f"cell python {cell['python']} needs {want[0]}, got {pairs}")  # type: ignore[index]
    else:
        problems.append(f"unknown ABI {abi!r}: give a cell or ship BUILD_INFO['abi']")
    if wheel_text is not None:
        in_file = parse_wheel_tags(wheel_text)
        in_name = {str(t) for t in tags}
        if in_file != in_name:
            problems.append(f"WHEEL file tags {sorted(in_file)} != filename tags {sorted(in_name)}")
    return _result(name, problems, ", ".join(pairs) + f" ({abi} ABI)")


def parse_metadata(text: str) -> email.message.Message:
    return email.parser.HeaderParser().parsestr(text)


def expected_local(cell: Mapping[str, object] | None, build_info: Mapping | None) -> str | None:
    """The local version suffix the cell (or, without one, BUILD_INFO) implies."""
    if cell and cell.get("local_version") is not None:
        return str(cell["local_version"])
    if not build_info or not build_info.get("variant"):
        return None
    variant = str(build_info["variant"])
    if build_info.get("abi") == "classic" and build_info.get("torch"):
        major, minor = Version(str(build_info["torch"])).release[:2]
        return f"{variant}torch{major}.{minor}"
    return variant


def check_version(
    filename: str,
    metadata_text: str,
    cell: Mapping[str, object] | None,
    build_info: Mapping | None,
) -> CheckResult:
    """The local suffix (+cu130, +cu130torch2.11, ...) matches the cell and BUILD_INFO."""
    name = "version"
    try:
        file_version, _ = split_wheel_filename(filename)
        meta_version = Version(parse_metadata(metadata_text).get("Version", ""))
    except (InvalidWheelFilename, InvalidVersion) as exc:
        return CheckResult(name, FAIL, f"unreadable version: {exc}")
    problems: list[str] = []
    if meta_version != file_version:
        problems.append(f"METADATA Version {meta_version} != filename version {file_version}")
    want = expected_local(cell, build_info)
    got = meta_version.local
    # The PyPI flavor of the default variant carries no local suffix (PyPI rejects them).
    pypi_flavor = got is None and bool(cell and cell.get("pypi_default"))
    if want is not None and got != want and not pypi_flavor:
        problems.append(f"local version is +{got}, expected +{want}")
    if build_info and build_info.get("version"):
        try:
            built = Version(str(build_info["version"]))
        except InvalidVersion:
            problems.append(f"BUILD_INFO version {build_info['version']!r} is not PEP 440")
        else:
            if built != meta_version and not (got is None and built.public == meta_version.public):
                problems.append(f"BUILD_INFO version {built} != METADATA Version {meta_version}")
    elif build_info is not None:
        problems.append("BUILD_INFO has no version")
    suffix = " (PyPI flavor)" if pypi_flavor else ""
    return _result(name, problems, f"{meta_version}{suffix}")


def _admitted(spec: SpecifierSet, versions: Iterable[str]) -> set[str]:
    return {v for v in versions if spec.contains(v, prereleases=True)}


_PYTHON_SAMPLES = [f"3.{m}" for m in range(6, 20)]


def torch_requirement(metadata_text: str) -> SpecifierSet | None:
    """The specifier of the ``Requires-Dist: torch`` line, None if there is none."""
    for line in parse_metadata(metadata_text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.name.lower() == "torch" and req.marker is None:
            return req.specifier
    return None


def check_metadata(
    metadata_text: str,
    cell: Mapping[str, object] | None,
    build_info: Mapping | None = None,
) -> CheckResult:
    """``Requires-Dist: torch`` pin and ``Requires-Python`` agree with the cell / BUILD_INFO."""
    name = "requirements"
    meta = parse_metadata(metadata_text)
    problems: list[str] = []
    torch_spec = torch_requirement(metadata_text)
    abi = expected_abi(cell, build_info)
    if torch_spec is None or not str(torch_spec):
        problems.append(
            "no 'Requires-Dist: torch<spec>' pin: pip could pair this wheel with any torch"
        )
    else:
        if cell and cell.get("torch_requirement"):
            want = SpecifierSet(str(cell["torch_requirement"]))
            if torch_spec != want:
                problems.append(f"Requires-Dist torch{torch_spec}, expected torch{want}")
        if build_info and build_info.get("torch"):
            built = Version(str(build_info["torch"])).public
            if not torch_spec.contains(built, prereleases=True):
                problems.append(
                    f"torch{torch_spec} excludes the torch it was built against ({built})"
                )
        if abi == "classic" and not all(s.operator == "==" for s in torch_spec):
            problems.append(f"classic wheel must pin one torch minor (==A.B.*), got {torch_spec}")
    requires_python = meta.get("Requires-Python")
    if not requires_python:
        problems.append("no Requires-Python")
    else:
        try:
            py_spec = SpecifierSet(requires_python)
        except InvalidSpecifier:
            return CheckResult(name, FAIL, f"invalid Requires-Python {requires_python!r}")
        if abi == "stable" and "3.9" in py_spec:
            problems.append(f"Requires-Python {py_spec} admits 3.9; the limited API floor is 3.10")
        if cell and cell.get("python") and not py_spec.contains(str(cell["python"])):
            problems.append(
                f"Requires-Python {py_spec} excludes the cell's Python {cell['python']}"
            )
        if cell and cell.get("python_requirement"):
            claimed = _admitted(SpecifierSet(str(cell["python_requirement"])), _PYTHON_SAMPLES)
            missing = sorted(claimed - _admitted(py_spec, _PYTHON_SAMPLES))
            if missing:
                problems.append(f"Requires-Python {py_spec} excludes {missing} the cell promises")
    return _result(name, problems, f"torch{torch_spec}; python{requires_python}")


def parse_build_info(source: str) -> dict[str, object]:
    """``BUILD_INFO = {...}`` from _build_info.py, read as a literal (never executed)."""
    for node in ast.parse(source).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "BUILD_INFO" for t in targets):
            value = ast.literal_eval(node.value)  # type: ignore[arg-type]
            if not isinstance(value, dict):
                raise ValueError("BUILD_INFO is not a dict")
            return value
    raise ValueError("no BUILD_INFO = {...} assignment")


def cuda_variant(cuda: str | None) -> str:
    """ "13.0" -> "cu130", None -> "cpu"."""
    if not cuda:
        return "cpu"
    major, minor = str(cuda).split(".")[:2]
    return f"cu{major}{minor}"


def check_build_info(build_info: Mapping | None, cell: Mapping[str, object] | None) -> CheckResult:
    """BUILD_INFO is complete, self-consistent and matches the cell."""
    name = "build-info"
    if build_info is None:
        return CheckResult(name, FAIL, "fusedops/_build_info.py with a BUILD_INFO dict is missing")
    problems = [f"missing key {k!r}" for k in BUILD_INFO_KEYS if k not in build_info]
    cuda = build_info.get("cuda")
    archs = build_info.get("arch_list") or []
    if build_info.get("variant") != cuda_variant(cuda):  # type: ignore[arg-type]
        problems.append(f"variant {build_info.get('variant')!r} does not match cuda {cuda!r}")
    if bool(cuda) != bool(archs):
        problems.append(f"cuda {cuda!r} with arch_list {archs!r}: CUDA builds need archs, CPU none")
    if cell:
        want_cuda = None if cell.get("cuda") in (None, "cpu") else str(cell["cuda"])
        checks = [("abi", cell.get("abi"), build_info.get("abi")), ("cuda", want_cuda, cuda)]
        if cell.get("variant"):
            checks.append(("variant", cell["variant"], build_info.get("variant")))
        if "arch_list" in cell:
            checks.append(("arch_list", str(cell["arch_list"] or "").split(), list(archs)))
        problems += [
            f"{k} is {got!r}, cell says {want!r}" for k, want, got in checks if want != got
        ]
        if cell.get("torch") and build_info.get("torch"):
            want_t, got_t = Version(str(cell["torch"])), Version(str(build_info["torch"]))
            if got_t.release[: len(want_t.release)] != want_t.release:
                problems.append(f"built against torch {got_t}, cell says {want_t}")
    summary = (
        f"torch {build_info.get('torch')}, cuda {cuda}, {build_info.get('abi')} ABI, "
        f"archs {' '.join(archs) or '-'}, git {str(build_info.get('git_sha'))[:12]}"
    )
    return _result(name, problems, summary)


def arch_targets(arch_list: Sequence[str] | str) -> tuple[list[str], list[str]]:
    """TORCH_CUDA_ARCH_LIST entries -> (SASS targets, PTX targets).

    "8.6" -> sm_86; "9.0a" -> sm_90a; "12.0+PTX" -> sm_120 and PTX for compute_120.
    """
    items = arch_list.replace(";", " ").split() if isinstance(arch_list, str) else arch_list
    sass, ptx = [], []
    for item in items:
        base, _, extra = item.partition("+")
        m = re.fullmatch(r"(\d+)\.(\d+)([a-z]?)", base.strip())
        if not m:
            raise ValueError(f"bad arch {item!r} (expected like 8.6, 9.0a or 12.0+PTX)")
        target = f"sm_{m.group(1)}{m.group(2)}{m.group(3)}"
        sass.append(target)
        if extra.upper() == "PTX":
            ptx.append(target)
    return sass, ptx


def listed_archs(listing: str) -> set[str]:
    """sm_XY names in ``cuobjdump --list-elf`` / ``--list-ptx`` output."""
    found = set()
    for line in listing.splitlines():
        if line.strip().startswith(("ELF file", "PTX file")):
            found.update(re.findall(r"\bsm_(\d+[a-z]?)\b", line))
    return {f"sm_{a}" for a in found}


def check_sass(
    elf_listing: str, arch_list: Sequence[str] | str, ptx_listing: str = ""
) -> CheckResult:
    """SASS for every arch of the list, PTX for the ones marked +PTX."""
    name = "cuda-archs"
    try:
        want_sass, want_ptx = arch_targets(arch_list)
    except ValueError as exc:
        return CheckResult(name, FAIL, str(exc))
    if not want_sass:
        return CheckResult(name, FAIL, "CUDA wheel but the arch list is empty")
    have_sass, have_ptx = listed_archs(elf_listing), listed_archs(ptx_listing)
    problems = []
    if not have_sass and not have_ptx:
        problems.append("no device code found in the extension")
    if missing := [a for a in want_sass if a not in have_sass]:
        problems.append(
            f"missing SASS for {', '.join(missing)} (GPUs of that arch get 'no kernel image')"
        )
    if missing_ptx := [a for a in want_ptx if a not in have_ptx]:
        problems.append(f"missing PTX for {', '.join(missing_ptx)} (declared +PTX)")
    ok = f"SASS {' '.join(sorted(have_sass, key=_arch_key))}"
    ok += f"; PTX {' '.join(sorted(have_ptx, key=_arch_key)) or '-'}"
    if extra := sorted(have_sass - set(want_sass), key=_arch_key):
        ok += f"; extra SASS {' '.join(extra)}"
    return _result(name, problems, ok)


def _arch_key(target: str) -> tuple[int, str]:
    m = re.match(r"sm_(\d+)(\w*)", target)
    return (int(m.group(1)), m.group(2)) if m else (0, target)


def check_no_cuda(
    needed: Mapping[str, Sequence[str]], fatbin_bytes: Mapping[str, int]
) -> CheckResult:
    """A CPU wheel has no device code and links no CUDA library."""
    problems = []
    for so, libs in sorted(needed.items()):
        if cuda_libs := [lib for lib in libs if CUDA_NEEDED_RE.match(lib)]:
            problems.append(f"{so} needs {', '.join(cuda_libs)}")
    problems += [f"{so} has a {n}-byte .nv_fatbin" for so, n in sorted(fatbin_bytes.items()) if n]
    if not needed:
        problems.append("no extension module (.so) found in the wheel")
    return _result("no-cuda", problems, "CPU wheel: no device code, no CUDA libraries needed")


def parse_fatbin(data: bytes) -> FatbinSummary:
    """Walk the fatbin containers of an ``.nv_fatbin`` section."""
    elf = ptx = compressed = uncompressed = 0
    off = 0
    while off + 16 <= len(data):
        magic, _ver, header_size, fat_size = struct.unpack_from("<IHHQ", data, off)
        if magic != FATBIN_MAGIC:
            break
        pos, end = off + header_size, off + header_size + fat_size
        while pos + 16 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, pos)
            flags = struct.unpack_from("<Q", data, pos + 40)[0] if entry_header >= 48 else 0
            full = struct.unpack_from("<Q", data, pos + 56)[0] if entry_header >= 64 else 0
            is_compressed = bool(flags & FATBIN_COMPRESSED_FLAGS) or full > 0
            elf += kind == 2
            ptx += kind == 1
            compressed += is_compressed
            uncompressed += full if is_compressed and full else payload
            pos += entry_header + payload
        off = end
    return FatbinSummary(elf, ptx, compressed, len(data), uncompressed)


def check_fatbin(summaries: Mapping[str, FatbinSummary]) -> CheckResult:
    """Informational: how much device code there is and whether it is compressed."""
    total = FatbinSummary(
        *(
            sum(getattr(s, f) for s in summaries.values())
            for f in FatbinSummary.__dataclass_fields__
        )
    )
    entries = total.elf_entries + total.ptx_entries
    if not entries:
        return CheckResult("fatbin", SKIP, "no device code")
    msg = (
        f"{total.elf_entries} SASS + {total.ptx_entries} PTX images, "
        f"{total.compressed_entries}/{entries} compressed, "
        f"{total.stored_bytes / 2**20:.1f} MB stored / {total.uncompressed_bytes / 2**20:.1f} MB raw"
    )
    if total.compressed_entries == 0:
        return CheckResult("fatbin", WARN, msg + " -- build with nvcc --compress-mode=size")
    return CheckResult("fatbin", PASS, msg)


def check_abi3audit(
    report: Mapping[str, object] | None, returncode: int, output: str = ""
) -> CheckResult:
    """``abi3audit --strict --report`` result: only limited-API 3.10 symbols allowed."""
    name = "abi3audit"
    problems: list[str] = []
    specs = (report or {}).get("specs") or {}
    for spec in specs.values():  # type: ignore[union-attr]
        for obj in _abi3_objects(spec):
            result = obj.get("result") or {}
            bad = result.get("non_abi3_symbols") or []
            if bad:
                problems.append(
                    f"{obj.get('name')}: non-limited-API symbols {', '.join(sorted(bad))}"
                )
            computed, baseline = result.get("computed"), result.get("baseline")
            if computed and baseline and Version(computed) > Version(baseline):
                problems.append(f"{obj.get('name')}: needs abi3 {computed} > the tag's {baseline}")
    if returncode != 0 and not problems:
        problems.append(f"abi3audit exit {returncode}: {output.strip()[-1000:] or 'no output'}")
    return _result(name, problems, "only limited API (abi3, 3.10) symbols")


def _abi3_objects(spec: Mapping) -> list[Mapping]:
    if spec.get("kind") == "object":
        return [spec.get("object") or {}]
    wheel = spec.get("wheel")
    return list(wheel) if isinstance(wheel, list) else []


def check_size(size_bytes: int, max_mb: float | None = None) -> CheckResult:
    mb = size_bytes / 2**20
    msg = f"{mb:.1f} MB"
    if max_mb is not None and mb > max_mb:
        return CheckResult("size", FAIL, f"{msg} exceeds the limit of {max_mb:g} MB")
    if mb > PYPI_SIZE_LIMIT_MB:
        return CheckResult(
            "size", WARN, f"{msg}: over PyPI's default {PYPI_SIZE_LIMIT_MB:g} MB limit"
        )
    return CheckResult("size", PASS, msg)


def smoke_expectation(
    cell: Mapping[str, object] | None, build_info: Mapping | None
) -> dict[str, object]:
    """The BUILD_INFO fields the installed package must report at run time."""
    source = build_info or {}
    want: dict[str, object] = {k: source[k] for k in ("version", "abi", "variant") if k in source}
    if cell:
        if cell.get("abi"):
            want["abi"] = cell["abi"]
        if cell.get("cuda"):
            want["cuda"] = None if cell["cuda"] == "cpu" else cell["cuda"]
        if cell.get("variant"):
            want["variant"] = cell["variant"]
    return want


def check_smoke_output(
    returncode: int, output: str, torch_spec: SpecifierSet | None = None
) -> CheckResult:
    """Judge the smoke script's output: its last line is a JSON summary."""
    name = "smoke"
    summary: dict[str, object] = {}
    for line in reversed(output.strip().splitlines()):
        if line.startswith("SMOKE-RESULT "):
            summary = json.loads(line[len("SMOKE-RESULT ") :])
            break
    if not summary:
        tail = "\n".join(output.strip().splitlines()[-15:])
        return CheckResult(name, FAIL, f"smoke script died (exit {returncode}):\n{tail}")
    problems = list(summary.get("errors") or [])  # type: ignore[call-overload]
    torch_version = str(summary.get("torch", ""))
    if torch_spec is not None and torch_version:
        public = Version(torch_version).public
        if not torch_spec.contains(public, prereleases=True):
            problems.append(
                f"smoke env has torch {torch_version}, outside the wheel's torch{torch_spec}"
            )
    if returncode != 0 and not problems:
        problems.append(f"smoke script exit {returncode}")
    ok = f"3 ops match torch on CPU (torch {torch_version}, python {summary.get('python')})"
    return _result(name, problems, ok)


# Runs inside the smoke environment: only torch and fusedops may be imported.
SMOKE_SCRIPT = r"""
import json, os, platform, sys
expect = json.loads(os.environ["FUSEDOPS_SMOKE_EXPECT"])
errors = []
result = {"python": platform.python_version(), "errors": errors}
try:
    import torch
    result["torch"] = torch.__version__.split("+")[0]
    import fusedops
    from fusedops._build_info import BUILD_INFO
except Exception as exc:
    errors.append(f"import failed: {type(exc).__name__}: {exc}")
    print("SMOKE-RESULT " + json.dumps(result))
    sys.exit(1)
print("fusedops imported from", fusedops.__file__)
print("BUILD_INFO", json.dumps(BUILD_INFO, sort_keys=True, default=str))
root = expect.get("install_root")
if root and not os.path.realpath(fusedops.__file__).startswith(os.path.realpath(root) + os.sep):
    errors.append(f"imported fusedops from {fusedops.__file__}, not the wheel under test")
for key, want in expect.get("build_info", {}).items():
    if BUILD_INFO.get(key) != want:
        errors.append(f"BUILD_INFO[{key!r}] is {BUILD_INFO.get(key)!r}, expected {want!r}")
torch.manual_seed(0)
d, eps = 64, 1e-6
x, res, w = torch.randn(4, 3, d), torch.randn(4, 3, d), torch.randn(d)
g = torch.randn(4, 3, 2 * d)
def ref_rms(t):
    return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * w
def run(op, fn):
    try:
        fn()
        print("ok", op)
    except Exception as exc:
        errors.append(f"{op}: {type(exc).__name__}: {str(exc).strip()[:500]}")
run("rms_norm", lambda: torch.testing.assert_close(fusedops.rms_norm(x, w), ref_rms(x)))
def fused():
    out, res_out = fusedops.fused_add_rms_norm(x, res, w)
    torch.testing.assert_close(res_out, x + res)
    torch.testing.assert_close(out, ref_rms(x + res))
run("fused_add_rms_norm", fused)
run("silu_and_mul", lambda: torch.testing.assert_close(
    fusedops.silu_and_mul(g), torch.nn.functional.silu(g[..., :d]) * g[..., d:]))
print("SMOKE-RESULT " + json.dumps(result))
sys.exit(1 if errors else 0)
"""


# --- I/O helpers ----------------------------------------------------------------


@dataclass
class WheelContents:
    path: Path
    names: list[str]
    metadata: str
    wheel_text: str
    build_info: dict[str, object] | None
    build_info_error: str | None


def read_wheel(path: Path) -> WheelContents:
    """The parts of a wheel the checks need, read straight from the zip."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        dist_info = sorted(
            {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        )
        if len(dist_info) != 1:
            raise ValueError(f"expected one .dist-info directory, found {dist_info}")
        metadata = zf.read(f"{dist_info[0]}/METADATA").decode()
        wheel_text = zf.read(f"{dist_info[0]}/WHEEL").decode()
        build_info, error = None, None
        if "fusedops/_build_info.py" in names:
            try:
                build_info = parse_build_info(zf.read("fusedops/_build_info.py").decode())
            except (ValueError, SyntaxError) as exc:
                error = f"fusedops/_build_info.py: {exc}"
    return WheelContents(path, names, metadata, wheel_text, build_info, error)


def extension_members(names: Iterable[str]) -> list[str]:
    """Our own extension modules (not libraries auditwheel grafted into *.libs/)."""
    return sorted(
        n
        for n in names
        if n.startswith("fusedops/") and re.search(r"\.so(\.|$)", n) and ".libs/" not in n
    )


def extract(path: Path, members: Iterable[str], dest: Path) -> list[Path]:
    with zipfile.ZipFile(path) as zf:
        return [Path(zf.extract(m, dest)) for m in members]


def find_cuobjdump(env: Mapping[str, str] | None = None) -> Path | None:
    """cuobjdump from $CUOBJDUMP, PATH, $CUDA_HOME/bin or an installed nvidia/cu13/bin."""
    env = os.environ if env is None else env
    candidates: list[Path] = []
    if env.get("CUOBJDUMP"):
        candidates.append(Path(env["CUOBJDUMP"]))
    if found := shutil.which("cuobjdump", path=env.get("PATH", "")):
        candidates.append(Path(found))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            candidates.append(Path(env[var]) / "bin" / "cuobjdump")
    candidates += _nvidia_package_bins()
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def _nvidia_package_bins() -> list[Path]:
    """cuobjdump inside the importable ``nvidia`` namespace package (PyPI wheels)."""

    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec else []
    return [
        Path(r) / sub / "bin" / "cuobjdump"
        for r in roots
        for sub in ("cu13", "cu12", "cuda_cuobjdump")
    ]


def cuobjdump_list(tool: Path, so: Path, what: str) -> str:
    """``cuobjdump --list-elf|--list-ptx``; a file without device code lists nothing."""
    proc = subprocess.run(
        [str(tool), f"--list-{what}", str(so)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        if "does not contain device code" in proc.stderr + proc.stdout:
            return ""
        raise RuntimeError(f"cuobjdump --list-{what} {so.name} failed: {proc.stderr.strip()}")
    return proc.stdout


def elf_needed(so: Path) -> list[str]:
    """DT_NEEDED entries, with pyelftools when present, else ``readelf -d``."""
    try:
        from elftools.elf.dynamic import DynamicSection
        from elftools.elf.elffile import ELFFile
    except ImportError:
        proc = subprocess.run(
            ["readelf", "-d", str(so)], capture_output=True, text=True, check=True
        )
        return parse_readelf_needed(proc.stdout)
    with so.open("rb") as f:
        elf = ELFFile(f)
        return [
            tag.needed
            for section in elf.iter_sections()
            if isinstance(section, DynamicSection)
            for tag in section.iter_tags()
            if tag.entry.d_tag == "DT_NEEDED"
        ]


def parse_readelf_needed(text: str) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", text)


def fatbin_section(so: Path) -> bytes:
    """Raw ``.nv_fatbin`` section (empty when absent)."""
    try:
        from elftools.elf.elffile import ELFFile
    except ImportError:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "fatbin"
            subprocess.run(
                ["objcopy", "-O", "binary", "--only-section=.nv_fatbin", str(so), str(out)],
                capture_output=True,
                check=False,
            )
            return out.read_bytes() if out.exists() else b""
    with so.open("rb") as f:
        section = ELFFile(f).get_section_by_name(".nv_fatbin")
        return section.data() if section is not None else b""


def run_abi3audit(wheel: Path) -> tuple[dict[str, object] | None, int, str]:
    """abi3audit --strict --report on the wheel (its cp310-abi3 tag sets the baseline)."""
    cmd = [sys.executable, "-m", "abi3audit", "--strict", "--report", str(wheel)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return report, proc.returncode, proc.stderr + proc.stdout


# --- checks that need tools ---------------------------------------------------------


def cuda_checks(so_files: Sequence[Path], arch_list: Sequence[str] | str) -> list[CheckResult]:
    fatbins = {so.name: parse_fatbin(fatbin_section(so)) for so in so_files}
    tool = find_cuobjdump()
    if tool is None:
        sass = CheckResult("cuda-archs", FAIL, f"cuobjdump not found: {CUOBJDUMP_HINT}")
    elif not so_files:
        sass = CheckResult("cuda-archs", FAIL, "no extension module (.so) found in the wheel")
    else:
        try:
            elf = "\n".join(cuobjdump_list(tool, so, "elf") for so in so_files)
            ptx = "\n".join(cuobjdump_list(tool, so, "ptx") for so in so_files)
        except RuntimeError as exc:
            sass = CheckResult("cuda-archs", FAIL, str(exc))
        else:
            sass = check_sass(elf, arch_list, ptx)
    return [sass, check_fatbin(fatbins)]


def cpu_checks(so_files: Sequence[Path]) -> list[CheckResult]:
    needed = {so.name: elf_needed(so) for so in so_files}
    fatbin = {so.name: len(fatbin_section(so)) for so in so_files}
    return [check_no_cuda(needed, fatbin)]


def abi3_check(wheel: Path, abi: str | None) -> CheckResult:
    try:
        abi3_tagged = any(t.abi == "abi3" for t in split_wheel_filename(wheel.name)[1])
    except InvalidWheelFilename:
        abi3_tagged = False
    # Audit whatever claims abi3, even when the cell says classic (wheel-tags flags that).
    if abi != "stable" and not abi3_tagged:
        return CheckResult("abi3audit", SKIP, f"{abi} ABI wheel: not abi3")

    if importlib.util.find_spec("abi3audit") is None:
        return CheckResult("abi3audit", FAIL, f"abi3audit is not installed: {ABI3AUDIT_HINT}")
    return check_abi3audit(*run_abi3audit(wheel))


def auditwheel_check(wheel: Path) -> CheckResult:

    if importlib.util.find_spec("auditwheel") is None:
        return CheckResult("auditwheel", FAIL, f"auditwheel is not installed: {INSTALL_HINT}")
    try:
        show = auditwheel_show(wheel, auditwheel_env(None))
    except RuntimeError as exc:
        return CheckResult("auditwheel", FAIL, str(exc))
    return check_auditwheel(show, wheel.name)


def default_torch_spec(cell: Mapping[str, object] | None, metadata_text: str) -> str:
    """``torch==<cell torch>``, else the cell's requirement, else the wheel's own pin."""
    if cell and cell.get("torch"):
        return f"torch=={cell['torch']}"
    if cell and cell.get("torch_requirement"):
        return f"torch{cell['torch_requirement']}"
    spec = torch_requirement(metadata_text)
    return f"torch{spec}" if spec else "torch"


def _pip(python: str, args: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Run pip; None on success, else a short error."""
    cmd = [python, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=dict(env), check=False, timeout=1800
    )
    if proc.returncode == 0:
        return None
    return f"{shlex.join(cmd)} failed:\n{(proc.stderr or proc.stdout).strip()[-1500:]}"


def _venv_site_packages(python: str) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout
    return Path(out.strip())


def prepare_smoke_env(
    wheel: Path,
    workdir: Path,
    *,
    python: str | None,
    smoke_python: str | None,
    torch_spec: str,
    pip_args: Sequence[str],
    inherit_site: bool = False,
) -> tuple[str, dict[str, str], Path]:
    """Install the wheel (--no-deps) next to a torch; return (python, env, install root).

    Raises RuntimeError with pip's message when an install fails.
    """
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if smoke_python:
        target = workdir / "site"
        err = _pip(
            smoke_python,
            ["install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
            env,
        )
        if err:
            raise RuntimeError(err)
        env["PYTHONPATH"] = str(target)
        return smoke_python, env, target
    venv = workdir / "venv"
    cmd = [python or sys.executable, "-m", "venv", str(venv)]  # no --system-site-packages
    if inherit_site:
        # pip (and setuptools, which torch requires) then come from the inherited
        # site; the venv's own older bundled copies would shadow them.
        cmd.append("--without-pip")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed: {proc.stderr.strip()}")
    py = str(venv / "bin" / "python")
    if inherit_site:
        # Offline runs: let the fresh venv see this interpreter's packages (its torch)
        # through a .pth, so pip finds torch already installed instead of downloading it.
        site_dir = _venv_site_packages(py)
        (site_dir / "_verify_wheel_inherit.pth").write_text(
            "\n".join(site.getsitepackages()) + "\n"
        )
    for args in (
        ["install", *pip_args, torch_spec],
        ["install", "--no-deps", "--no-index", str(wheel)],
    ):
        if err := _pip(py, args, env):
            raise RuntimeError(err)
    return py, env, venv


def smoke_check(
    wheel: Path,
    contents: WheelContents,
    cell: Mapping[str, object] | None,
    *,
    python: str | None,
    smoke_python: str | None,
    torch_spec: str | None,
    pip_args: Sequence[str],
    inherit_site: bool = False,
) -> CheckResult:
    spec = torch_spec or default_torch_spec(cell, contents.metadata)
    with tempfile.TemporaryDirectory(prefix="fusedops-smoke-") as tmp:
        try:
            py, env, root = prepare_smoke_env(
                wheel,
                Path(tmp),
                python=python,
                smoke_python=smoke_python,
                torch_spec=spec,
                pip_args=pip_args,
                inherit_site=inherit_site,
            )
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            return CheckResult("smoke", FAIL, f"could not set up the smoke environment: {exc}")
        expect = {
            "install_root": str(root),
            "build_info": smoke_expectation(cell, contents.build_info),
        }
        env["FUSEDOPS_SMOKE_EXPECT"] = json.dumps(expect)
        # cwd is the temp dir so a source checkout's fusedops/ cannot shadow the wheel.
        try:
            proc = subprocess.run(
                [py, "-c", SMOKE_SCRIPT],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
                check=False,
                timeout=SMOKE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return CheckResult("smoke", FAIL, f"smoke script hung for {SMOKE_TIMEOUT_S} s")
    return check_smoke_output(
        proc.returncode, proc.stdout + proc.stderr, torch_requirement(contents.metadata)
    )


# --- the gate ---------------------------------------------------------------------


def verify(
    wheel: Path,
    cell: Mapping[str, object] | None,
    *,
    smoke: bool,
    python: str | None = None,
    torch_spec: str | None = None,
    pip_args: Sequence[str] = (),
    smoke_python: str | None = None,
    expect_archs: str | None = None,
    max_size_mb: float | None = None,
    inherit_site: bool = False,
) -> Report:
    """Run every check on ``wheel`` (optionally against a matrix ``cell``)."""
    wheel = Path(wheel)
    report = Report(wheel.name)
    add = report.results.append
    if not wheel.is_file():
        add(CheckResult("wheel", FAIL, f"wheel not found: {wheel}"))
        return report
    try:
        contents = read_wheel(wheel)
    except (zipfile.BadZipFile, ValueError, KeyError) as exc:
        add(CheckResult("wheel", FAIL, f"not a readable wheel: {exc}"))
        return report
    info = contents.build_info
    add(check_platform_tag(wheel.name))
    add(auditwheel_check(wheel))
    add(check_no_vendored(contents.names))
    add(check_tags(wheel.name, cell, info, contents.wheel_text))
    add(check_version(wheel.name, contents.metadata, cell, info))
    add(check_metadata(contents.metadata, cell, info))
    if contents.build_info_error:
        add(CheckResult("build-info", FAIL, contents.build_info_error))
    else:
        add(check_build_info(info, cell))

    arch_list: Sequence[str] | str = expect_archs or ""
    if not arch_list and cell is not None and "arch_list" in cell:
        arch_list = str(cell.get("arch_list") or "")
    elif not arch_list and info:
        arch_list = list(info.get("arch_list") or [])  # type: ignore[call-overload]
    is_cuda = (cell.get("cuda") not in (None, "cpu")) if cell else bool(info and info.get("cuda"))
    with tempfile.TemporaryDirectory(prefix="fusedops-verify-") as tmp:
        so_files = extract(wheel, extension_members(contents.names), Path(tmp))
        report.results += cuda_checks(so_files, arch_list) if is_cuda else cpu_checks(so_files)
    add(abi3_check(wheel, expected_abi(cell, info)))
    add(check_size(wheel.stat().st_size, max_size_mb))
    if smoke:
        add(
            smoke_check(
                wheel,
                contents,
                cell,
                python=python,
                smoke_python=smoke_python,
                torch_spec=torch_spec,
                pip_args=pip_args,
                inherit_site=inherit_site,
            )
        )
    else:
        add(CheckResult("smoke", SKIP, "--no-smoke"))
    return report


# --- CLI --------------------------------------------------------------------------


def load_cell(cell_json: str | None, cell_file: Path | None) -> dict[str, object] | None:
    """The matrix cell from --cell-json / --cell-file (one JSON object)."""
    if cell_json is None and cell_file is None:
        return None
    text = cell_json if cell_json is not None else Path(cell_file).read_text()  # type: ignore[arg-type]
    cell = json.loads(text)
    if not isinstance(cell, dict) or "include" in cell:
        raise ValueError("the cell must be one JSON object (a single matrix entry, not the matrix)")
    return cell


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("wheel", type=Path)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--cell-json", help="the matrix cell as a JSON object")
    group.add_argument("--cell-file", type=Path, help="file holding the matrix cell JSON")
    p.add_argument("--no-smoke", action="store_true", help="skip the install + CPU smoke test")
    p.add_argument("--python", help="interpreter for the fresh smoke venv (default: this one)")
    p.add_argument(
        "--torch-spec", help="torch requirement for the smoke venv (default: the cell's)"
    )
    p.add_argument(
        "--pip-args",
        default="",
        help='extra pip args for torch, e.g. "--no-index --find-links DIR"',
    )
    p.add_argument(
        "--smoke-python", help="reuse this interpreter (with torch) instead of a fresh venv"
    )
    p.add_argument(
        "--smoke-inherit-site",
        action="store_true",
        help="let the fresh smoke venv see this interpreter's packages (offline: reuse its torch)",
    )
    p.add_argument("--expect-archs", help='arch list to require, e.g. "7.5 8.0 12.0+PTX"')
    p.add_argument("--max-size-mb", type=float, help="fail when the wheel is larger")
    p.add_argument("--json-out", type=Path, help="also write the report as JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cell = load_cell(args.cell_json, args.cell_file)
    except (OSError, ValueError) as exc:
        print(f"verify_wheel: error: bad cell: {exc}", file=sys.stderr)
        return 2
    report = verify(
        args.wheel,
        cell,
        smoke=not args.no_smoke,
        python=args.python,
        torch_spec=args.torch_spec,
        pip_args=shlex.split(args.pip_args),
        smoke_python=args.smoke_python,
        inherit_site=args.smoke_inherit_site,
        expect_archs=args.expect_archs,
        max_size_mb=args.max_size_mb,
    )
    print(report.table())
    if args.json_out:
        args.json_out.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
