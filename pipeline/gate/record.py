"""Checks over the wheel's file list: RECORD, the extension modules, vendored libraries.

A wheel whose files differ from its RECORD installs files nobody built (pip
does not check RECORD hashes of a local wheel); a second copy of the extension
lets the loader pick either; a bundled libtorch/libcudart breaks torch in the
same process. Each is a FAIL.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ..cell import Cell
from ..pypi_wheel import LIB_DIR
from ..repair import is_excluded
from .probe import WheelContents
from .report import FAIL, PASS, CheckResult, result

# RECORD may leave its own signatures unlisted (the wheel spec's RECORD.jws/.p7s).
_UNLISTED_OK = ("RECORD", "RECORD.jws", "RECORD.p7s")
# auditwheel renames a grafted library libfoo.so.1 to libfoo-<8 hex>.so.1.
_GRAFT_HASH = re.compile(r"-[0-9a-f]{8}(?=\.so)")
_SHARED_OBJECT = re.compile(r"\.so(\.|$)")
_SHOWN = 5  # list at most this many paths per kind of problem


def _some(paths: Sequence[str]) -> str:
    more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    return ", ".join(paths[:_SHOWN]) + more


def parse_record(text: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """RECORD rows as {path: (hash, size)}, and problems with its syntax."""
    rows: dict[str, tuple[str, str]] = {}
    problems = []
    for lineno, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row:
            continue
        if len(row) != 3:
            problems.append(f"RECORD line {lineno}: expected path,hash,size, got {row!r}")
            continue
        path, digest, size = row
        if path in rows:
            problems.append(f"RECORD lists {path} twice")
        rows[path] = (digest, size)
    return rows, problems


def _unsafe(path: str) -> bool:
    return path.startswith("/") or "\\" in path or ".." in path.split("/")


def check_record(contents: WheelContents) -> CheckResult:
    """Every file's sha256 and size as RECORD says; nothing unlisted, nothing missing."""
    name = "record"
    if contents.dist_info is None:
        found = list(contents.dist_infos) or "none"
        return CheckResult(name, FAIL, f"expected one .dist-info directory, found {found}")
    record_path = f"{contents.dist_info}/RECORD"
    if contents.record_text is None:
        return CheckResult(name, FAIL, f"{record_path} is missing")
    rows, problems = parse_record(contents.record_text)
    # zipfile keeps both entries of a duplicated name; installers extract both, last wins.
    if twice := sorted(n for n, k in Counter(contents.names).items() if k > 1):
        problems.append(f"zip holds the same path more than once: {_some(twice)}")
    if bad := list(contents.unreadable):
        problems.append(f"corrupt zip entries: {_some(bad)}")
    if unsafe := sorted(p for p in {*rows, *contents.names} if _unsafe(p)):
        problems.append(f"paths outside the install root: {_some(unsafe)}")
    files = {m.name: m for m in contents.members}
    own = {f"{contents.dist_info}/{n}" for n in _UNLISTED_OK}
    if unlisted := sorted(set(files) - set(rows) - own):
        problems.append(f"not in RECORD: {_some(unlisted)}")
    if missing := sorted(p for p in rows if p not in files and p not in own):
        problems.append(f"in RECORD but not in the wheel: {_some(missing)}")
    wrong_hash, wrong_size, no_hash = [], [], []
    for path, (digest, size) in sorted(rows.items()):
        member = files.get(path)
        if member is None or path in own:
            continue
        algo, _, value = digest.partition("=")
        if algo != "sha256" or not value:
            no_hash.append(path)
        elif value != member.sha256:
            wrong_hash.append(path)
        if not size.isdigit() or int(size) != member.size:
            wrong_size.append(f"{path} ({size or 'none'} in RECORD, {member.size} in the wheel)")
    if no_hash:
        problems.append(f"no sha256 in RECORD for: {_some(no_hash)}")
    if wrong_hash:
        problems.append(f"sha256 differs from RECORD: {_some(wrong_hash)}")
    if wrong_size:
        problems.append(f"size differs from RECORD: {_some(wrong_size)}")
    return result(name, problems, f"{len(files)} files match RECORD (sha256 and size)")


# --- the extension modules -------------------------------------------------------------


def extension_members(names: Iterable[str]) -> list[str]:
    """Shared objects of the package itself: everything but auditwheel's grafted *.libs/."""
    return sorted(
        {
            n
            for n in names
            if _SHARED_OBJECT.search(n.rsplit("/", 1)[-1]) and not n.split("/")[0].endswith(".libs")
        }
    )


def extension_pattern(cell: Cell | None) -> re.Pattern[str]:
    """The extension module a wheel of this cell carries (setup.py's fusedops._C).

    The loader loads the one ``fusedops/_C*.so`` it finds; a second one would be
    a second build of the ops, and which one loads would be left to chance.
    """
    if cell is None:
        return re.compile(r"^fusedops/_C\.[^/]+\.so$")
    if cell.abi == "stable":
        return re.compile(r"^fusedops/_C\.abi3\.so$")
    xy = cell.python_tag.removeprefix("cp")
    return re.compile(rf"^fusedops/_C\.cpython-{xy}-[^/]+\.so$")


def library_pattern(family: str) -> re.Pattern[str]:
    """One family's library in the multi-variant PyPI wheel (pipeline/pypi_wheel.py)."""
    return re.compile(rf"^{re.escape(LIB_DIR)}/{re.escape(family)}/_C\.abi3\.so$")


def check_extensions(names: Iterable[str], expected: Sequence[re.Pattern[str]]) -> CheckResult:
    """Exactly one module per expected pattern, and no other shared object of ours."""
    name = "extensions"
    found = extension_members(names)
    what = ", ".join(p.pattern for p in expected)
    if not found:
        return CheckResult(name, FAIL, f"no extension module in the wheel; expected {what}")
    problems = []
    if len(expected) == 1 and len(found) > 1:
        problems.append(
            f"{len(found)} extension modules ({', '.join(found)}); expected one module matching {what}"
        )
    else:
        for pattern in expected:
            if not (hits := [m for m in found if pattern.match(m)]):
                problems.append(f"no module matching {pattern.pattern}")
            elif len(hits) > 1:
                problems.append(f"{len(hits)} modules match {pattern.pattern}: {', '.join(hits)}")
        if stray := [m for m in found if not any(p.match(m) for p in expected)]:
            problems.append(f"unexpected extension module(s): {', '.join(stray)}")
    return result(name, problems, ", ".join(found))


# --- libraries that must come from torch --------------------------------------------------


def vendored_libraries(names: Iterable[str]) -> list[str]:
    """Members that are copies of torch/CUDA libraries (repair's exclude patterns)."""
    found = []
    for member in names:
        base = member.rsplit("/", 1)[-1]
        if _SHARED_OBJECT.search(base) and is_excluded(_GRAFT_HASH.sub("", base, count=1)):
            found.append(member)
    return sorted(set(found))


def check_no_vendored(names: Iterable[str]) -> CheckResult:
    name = "no-vendored-libs"
    if found := vendored_libraries(names):
        return CheckResult(
            name,
            FAIL,
            f"wheel ships torch/CUDA libraries (they must come from torch): {', '.join(found)}"
            " -- repair with `python -m pipeline repair`, which excludes them",
        )
    return CheckResult(name, PASS, "no torch/CUDA libraries inside")
