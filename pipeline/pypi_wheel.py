"""The one PyPI wheel: every variant family's library in one public-version abi3 wheel.

PyPI holds one wheel per platform, while torch users run CPU, CUDA 12 and CUDA 13
builds of torch. So the PyPI wheel carries one extension per family,

    fusedops/_lib/cpu/_C.abi3.so   fusedops/_lib/cu12/_C.abi3.so   fusedops/_lib/cu13/_C.abi3.so

and the loader picks one from `torch.version.cuda` before anything is loaded
(FUSEDOPS_VARIANT overrides). Each part is built by its own stable cell (the
CUDA 12 part by CUDA 12.8, in CI), passes the gate on its own, and is then
assembled here; the assembled wheel passes the gate again (every part's device
code, RECORD, abi3).

    python -m pipeline pypi-wheel PART.whl [PART.whl ...] -o OUT_DIR
    python -m pipeline pypi-wheel --from RELEASE_DIR -o OUT_DIR   (the matrix's part cells)
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import re
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from . import matrix
from .cell import PROJECT, Cell
from .repair import policy_glibc
from .rules import Variant

LIB_DIR = "fusedops/_lib"
# Files every part has in common (byte-identical Python sources); these differ by part.
PER_PART = ("fusedops/_build_info.py", "fusedops/_version.py")
_EXT = re.compile(r"^fusedops/_C[.\w-]*\.so$")
_POLICY = re.compile(r"^manylinux_(\d+)_(\d+)_(\w+)$")
# Every SOURCE_DATE_EPOCH-style build writes fixed zip times; so does assembly.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class AssemblyError(ValueError):
    pass


@dataclass(frozen=True)
class Part:
    path: Path
    family: str  # "cpu", "cu12", "cu13"
    version: str  # its base (public) version
    platform_tag: str
    members: dict[str, bytes]
    build_info: dict

    @property
    def extension(self) -> tuple[str, bytes]:
        found = [(n, b) for n, b in self.members.items() if _EXT.match(n)]
        if len(found) != 1:
            raise AssemblyError(
                f"{self.path.name}: expected one fusedops/_C*.so, found {[n for n, _ in found]}"
            )
        return found[0]


def _build_info(source: bytes, where: str) -> dict:
    namespace: dict = {}
    try:
        exec(compile(source, where, "exec"), {}, namespace)  # a literal dict written by setup.py
        return dict(namespace["BUILD_INFO"])
    except Exception as err:
        raise AssemblyError(f"{where}: unreadable BUILD_INFO ({err})") from None


def read_part(path: Path) -> Part:
    try:
        name, version, _, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as err:
        raise AssemblyError(f"{path.name}: not a wheel filename ({err})") from None
    if name != PROJECT or {t.abi for t in tags} != {"abi3"} or not version.local:
        raise AssemblyError(
            f"{path.name}: a part must be a stable-ABI (abi3) fusedops wheel with a +variant version"
        )
    platform = most_compatible({t.platform for t in tags}, path.name)
    with zipfile.ZipFile(path) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
    info = _build_info(
        members.get("fusedops/_build_info.py", b""), f"{path.name}:fusedops/_build_info.py"
    )
    variant = Variant.parse(str(info.get("variant", "")))
    if str(variant) != version.local.split("torch")[0]:
        raise AssemblyError(
            f"{path.name}: BUILD_INFO variant {variant} does not match the version +{version.local}"
        )
    return Part(path, variant.family, version.public, platform, members, info)


def most_compatible(platforms: set[str], where: str) -> str:
    """The oldest-glibc manylinux tag of a (compressed) tag set: what the part promises.

    Legacy aliases (manylinux2014_x86_64, ...) count by their glibc, as the gate reads them.
    """
    known = sorted((glibc, p) for p in platforms if (glibc := policy_glibc(p)) is not None)
    if not known:
        raise AssemblyError(
            f"{where}: not a repaired manylinux wheel ({', '.join(sorted(platforms))})"
        )
    (major, minor), chosen = known[0]
    m = _POLICY.match(chosen)
    machine = m.group(3) if m else chosen.partition("_")[2]
    return f"manylinux_{major}_{minor}_{machine}"


def _record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def strictest_platform(tags: Sequence[str]) -> str:
    """The manylinux tag every part satisfies: the newest glibc among them."""
    parsed = [(_POLICY.match(t), t) for t in tags]
    machines = {m.group(3) for m, _ in parsed}
    if len(machines) != 1:
        raise AssemblyError(f"parts for different machines: {sorted(machines)}")
    return max(parsed, key=lambda mt: (int(mt[0].group(1)), int(mt[0].group(2))))[1]


def assemble(parts: Sequence[Path], out_dir: Path) -> Path:
    """Write the multi-variant wheel into out_dir; return its path."""
    read = [read_part(Path(p)) for p in parts]
    if not read:
        raise AssemblyError("no parts given")
    families = [p.family for p in read]
    if len(set(families)) != len(families):
        raise AssemblyError(f"two parts of one family: {families}")
    versions = {p.version for p in read}
    if len(versions) != 1:
        raise AssemblyError(f"parts of different versions: {sorted(versions)}")
    version = versions.pop()
    base = read[0]
    shared = {
        n: b
        for n, b in base.members.items()
        if n.startswith("fusedops/") and not _EXT.match(n) and n not in PER_PART
    }
    for part in read[1:]:
        theirs = {
            n: b
            for n, b in part.members.items()
            if n.startswith("fusedops/") and not _EXT.match(n) and n not in PER_PART
        }
        if theirs != shared:
            raise AssemblyError(
                f"{part.path.name}: its Python files differ from {base.path.name}'s (built from another source?)"
            )

    platform = strictest_platform([p.platform_tag for p in read])
    dist_info = f"{PROJECT}-{version}.dist-info"
    old_dist = next(n.split("/")[0] for n in base.members if n.endswith(".dist-info/METADATA"))
    files: dict[str, bytes] = dict(shared)
    variants = {}
    for part in sorted(read, key=lambda p: p.family):
        _, data = part.extension
        files[f"{LIB_DIR}/{part.family}/_C.abi3.so"] = data
        variants[part.family] = {**part.build_info, "version": version}
    info = {
        "version": version,
        "abi": "stable",
        "torch": base.build_info.get("torch"),
        "git_sha": base.build_info.get("git_sha"),
        "variants": variants,
    }
    files["fusedops/_build_info.py"] = (
        "# Written by the PyPI wheel assembly (pipeline/pypi_wheel.py): one library per family.\n"
        f"BUILD_INFO = {info!r}\n"
    ).encode()
    files["fusedops/_version.py"] = (
        "# Written by the PyPI wheel assembly: the installed distribution's version.\n"
        f"__version__ = {version!r}\n"
    ).encode()
    metadata = base.members[f"{old_dist}/METADATA"].decode()
    metadata = re.sub(
        r"^Version: .*$", f"Version: {version}", metadata, count=1, flags=re.MULTILINE
    )
    files[f"{dist_info}/METADATA"] = metadata.encode()
    wheel_meta = base.members[f"{old_dist}/WHEEL"].decode()
    wheel_meta = re.sub(r"^Tag: .*$", f"Tag: cp310-abi3-{platform}", wheel_meta, flags=re.MULTILINE)
    files[f"{dist_info}/WHEEL"] = wheel_meta.encode()
    for name, data in base.members.items():
        rest = name[len(old_dist) + 1 :] if name.startswith(old_dist + "/") else None
        if rest and rest not in ("METADATA", "WHEEL", "RECORD"):
            files[f"{dist_info}/{rest}"] = data  # licenses/LICENSE, top_level.txt

    record_name = f"{dist_info}/RECORD"
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for name in sorted(files):
        writer.writerow(_record_line(name, files[name]))
    writer.writerow([record_name, "", ""])
    files[record_name] = buf.getvalue().encode()

    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{PROJECT}-{version}-cp310-abi3-{platform}.whl"
    tmp = target.with_suffix(".whl.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in [*sorted(n for n in files if n != record_name), record_name]:
            zinfo = zipfile.ZipInfo(name, ZIP_TIME)
            zinfo.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            zinfo.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zinfo, files[name])
    tmp.replace(target)  # never leave a half-written wheel under the final name
    return target


def parts_in(dist: Path, cells: Sequence[Cell], version: str) -> list[Path]:
    """The wheel of each PyPI part cell in a release directory (AssemblyError if one is missing)."""
    found, missing = [], []
    for cell in cells:
        prefix = cell.wheel_prefix(version)
        hits = sorted(p for p in dist.glob(prefix + "*.whl") if cell.platform.machine in p.name)
        if len(hits) != 1:
            missing.append(f"{cell.id} ({len(hits)} wheels match {prefix}*)")
        else:
            found.append(hits[0])
    if missing:
        raise AssemblyError(f"no single wheel in {dist} for: {', '.join(missing)}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pipeline pypi-wheel", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "parts",
        nargs="+",
        type=Path,
        help="gated stable wheels, one per family (cpu, cu12x, cu13x)",
    )
    p.add_argument("-o", "--out", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        missing = [str(x) for x in args.parts if not x.is_file()]
        if missing:
            raise AssemblyError(f"no such file: {', '.join(missing)}")
        print(assemble(args.parts, args.out))
    except (AssemblyError, OSError, matrix.MatrixError) as err:
        print(f"pipeline pypi-wheel: error: {err}", file=sys.stderr)
        return 2
    return 0
