"""Pure checks of the compiled parts: linked libraries, device code, limited API, size.

Their inputs come from probe.py (auditwheel show, DT_NEEDED, cuobjdump
listings, the .nv_fatbin section, abi3audit's report).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from packaging.version import InvalidVersion, Version

from ..archs import ArchList
from ..elf import private_libstdcxx_problem
from ..repair import is_excluded, policy_glibc
from .checks import WheelName
from .report import FAIL, PASS, SKIP, WARN, CheckResult, result

PYPI_SIZE_LIMIT_MB = 100.0  # PyPI's default per-file upload limit
# What a torch or CUDA library is called (a CPU wheel may link none of the CUDA
# ones). Which of them must stay external is repair's TORCH_CUDA_EXCLUDES.
_CUDA_LIB = re.compile(
    r"^lib(cu(da|blas|dnn|fft|rand|sparse|solver|pti)|nvrtc|nvjitlink|nccl)|_cuda[.-]"
)
_TORCH_LIB = re.compile(r"^lib(torch|c10|shm[.-]|python3)")
_GRAFT_HASH = re.compile(r"-[0-9a-f]{8}(?=\.so)")

# fatbin container layout (little endian): header magic, then entries whose
# headers carry kind (1 PTX, 2 ELF), payload size, arch, flags and, when the
# payload is compressed, its uncompressed size.
FATBIN_MAGIC = 0xBA55ED50
FATBIN_COMPRESSED_FLAGS = 0x2000 | 0x8000  # legacy LZ4 bit, CUDA 12.8+/13 bit


def check_auditwheel(show: Mapping[str, object], wheel: WheelName) -> CheckResult:
    """``auditwheel show --json`` must agree with the filename's manylinux tag.

    show has no --exclude, so torch's libraries appear as external; those are
    expected. Any other external library means repair did not graft it.
    """
    name = "auditwheel"
    if show.get("error"):
        return CheckResult(name, FAIL, f"auditwheel show: {show['error']}")
    claims = [g for g in (policy_glibc(p) for p in wheel.platforms) if g is not None]
    problems = []
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
    if ungrafted := [lib for lib in external if not is_excluded(lib)]:
        problems.append(f"needs libraries neither in the wheel nor from torch: {ungrafted}")
    detail = f"consistent with its tag (symbols need {sym_tag})"
    if provided := [lib for lib in external if is_excluded(lib)]:
        detail += f"; from torch at run time: {', '.join(provided)}"
    return result(name, problems, detail)


def _unhashed(soname: str) -> str:
    return _GRAFT_HASH.sub("", soname, count=1)


def check_linked_libs(needed: Mapping[str, Sequence[str] | str]) -> CheckResult:
    """Every torch/CUDA library the extension links is one repair leaves to torch.

    ``needed`` maps each extension to its DT_NEEDED list, or to why it could not
    be read. A torch/CUDA library outside TORCH_CUDA_EXCLUDES would be grafted
    into the wheel by the next repair.
    """
    name = "linked-libs"
    problems = []
    for so, libs in sorted(needed.items()):
        if isinstance(libs, str):
            problems.append(libs)
            continue
        ours = [
            lib
            for lib in libs
            if _CUDA_LIB.search(_unhashed(lib)) or _TORCH_LIB.search(_unhashed(lib))
        ]
        if grafted := [lib for lib in ours if _unhashed(lib) != lib]:
            problems.append(
                f"{so} links {', '.join(grafted)}: grafted copies of torch/CUDA libraries"
            )
        if private := private_libstdcxx_problem(list(libs)):
            problems.append(f"{so}: {private}")
        if stray := [lib for lib in ours if _unhashed(lib) == lib and not is_excluded(lib)]:
            problems.append(
                f"{so} links {', '.join(stray)}: torch/CUDA libraries that repair does not"
                " exclude (a pattern missing from TORCH_CUDA_EXCLUDES)"
            )
    if not needed:
        problems.append("no extension module (.so) found in the wheel")
    linked = sorted({lib for libs in needed.values() if not isinstance(libs, str) for lib in libs})
    from_torch = [lib for lib in linked if is_excluded(lib)]
    return result(name, problems, f"from torch: {', '.join(from_torch) or 'none'}")


def check_no_cuda(
    needed: Mapping[str, Sequence[str] | str], fatbin_bytes: Mapping[str, int]
) -> CheckResult:
    """A CPU wheel has no device code and links no CUDA library."""
    problems = []
    for so, libs in sorted(needed.items()):
        if isinstance(libs, str):
            continue  # linked-libs reports it
        if cuda := [lib for lib in libs if _CUDA_LIB.search(_unhashed(lib))]:
            problems.append(f"{so} needs {', '.join(cuda)}")
    problems += [f"{so} has a {n}-byte .nv_fatbin" for so, n in sorted(fatbin_bytes.items()) if n]
    if not needed:
        problems.append("no extension module (.so) found in the wheel")
    return result("no-cuda", problems, "CPU wheel: no device code, no CUDA libraries needed")


def listed_archs(listing: str) -> set[str]:
    """sm_XY names in ``cuobjdump --list-elf`` / ``--list-ptx`` output."""
    found = set()
    for line in listing.splitlines():
        if line.strip().startswith(("ELF file", "PTX file")):
            found.update(re.findall(r"\bsm_(\d+[a-z]?)\b", line))
    return {f"sm_{a}" for a in found}


def _arch_key(target: str) -> tuple[int, str]:
    m = re.match(r"sm_(\d+)(\w*)", target)
    return (int(m.group(1)), m.group(2)) if m else (0, target)


def check_sass(elf_listing: str, ptx_listing: str, archs: ArchList | None) -> CheckResult:
    """SASS for every arch of the list, PTX for the ones marked +PTX."""
    name = "cuda-archs"
    if archs is None:
        return CheckResult(name, FAIL, "CUDA wheel but no arch list to check against")
    want_sass = archs.sass
    want_ptx = [a.sass for a in archs.archs if a.ptx]  # cuobjdump names PTX by sm_XY too
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
    return result(name, problems, ok)


@dataclass(frozen=True)
class FatbinSummary:
    elf_entries: int = 0
    ptx_entries: int = 0
    compressed_entries: int = 0
    stored_bytes: int = 0
    uncompressed_bytes: int = 0


def parse_fatbin(data: bytes) -> FatbinSummary:
    """Walk the fatbin containers of an ``.nv_fatbin`` section."""
    elf = ptx = compressed = uncompressed = 0
    off = 0
    while off + 16 <= len(data):
        magic, _ver, header_size, fat_size = struct.unpack_from("<IHHQ", data, off)
        if magic != FATBIN_MAGIC:
            break
        pos, end = off + header_size, min(off + header_size + fat_size, len(data))
        while pos + 16 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, pos)
            if entry_header < 16:
                break  # corrupt: an entry header cannot be shorter than its own fields
            flags = struct.unpack_from("<Q", data, pos + 40)[0] if entry_header >= 48 else 0
            full = struct.unpack_from("<Q", data, pos + 56)[0] if entry_header >= 64 else 0
            is_compressed = bool(flags & FATBIN_COMPRESSED_FLAGS) or full > 0
            elf += kind == 2
            ptx += kind == 1
            compressed += is_compressed
            uncompressed += full if is_compressed and full else payload
            pos += entry_header + payload
        off = off + header_size + fat_size
    return FatbinSummary(elf, ptx, compressed, len(data), uncompressed)


def check_fatbin(summaries: Mapping[str, FatbinSummary]) -> CheckResult:
    """Informational: how much device code there is and whether it is compressed."""
    total = FatbinSummary(
        *(sum(getattr(s, f.name) for s in summaries.values()) for f in fields(FatbinSummary))
    )
    entries = total.elf_entries + total.ptx_entries
    if not entries and total.stored_bytes:
        # cuobjdump may still list something, but this is not the container nvcc writes.
        msg = f"{total.stored_bytes} bytes of .nv_fatbin hold no fatbin container (corrupt?)"
        return CheckResult("fatbin", FAIL, msg)
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


def _abi3_objects(spec: Mapping) -> list[Mapping]:
    if spec.get("kind") == "object":
        return [spec.get("object") or {}]
    wheel = spec.get("wheel")
    return list(wheel) if isinstance(wheel, list) else []


def check_abi3audit(
    report: Mapping[str, object] | None, returncode: int, output: str = ""
) -> CheckResult:
    """``abi3audit --strict --report`` result: only limited-API 3.10 symbols allowed."""
    name = "abi3audit"
    problems = []
    specs = (report or {}).get("specs") or {}
    for spec in specs.values():  # type: ignore[union-attr]
        for obj in _abi3_objects(spec):
            res = obj.get("result") or {}
            if bad := res.get("non_abi3_symbols") or []:
                problems.append(
                    f"{obj.get('name')}: non-limited-API symbols {', '.join(sorted(bad))}"
                )
            computed, baseline = res.get("computed"), res.get("baseline")
            try:
                newer = bool(computed and baseline) and Version(computed) > Version(baseline)
            except InvalidVersion:
                newer = False
            if newer:
                problems.append(f"{obj.get('name')}: needs abi3 {computed} > the tag's {baseline}")
    if returncode != 0 and not problems:
        # abi3audit prints a rich traceback on a crash; its last line names the error.
        last = [line.strip(" │╰╯─") for line in output.splitlines() if line.strip(" │╰╯─")]
        problems.append(f"abi3audit exit {returncode}: {last[-1] if last else 'no output'}")
    return result(name, problems, "only limited API (abi3, 3.10) symbols")


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
