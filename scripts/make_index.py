#!/usr/bin/env python3
"""Per-variant PEP 503 indexes, per-torch find-links pages and the PyPI flavor.

    python scripts/make_index.py WHEEL_DIR OUT_DIR [--base-url URL] [--torch-minors "2.9 2.10 ..."]
    python scripts/make_index.py WHEEL_DIR --pypi-flavor OUT [--pypi-variant cu130]

Layout written under OUT_DIR:

    index.html                          human landing page: variants and pip commands
    <variant>/index.html                PEP 503 root (lists the project fusedops)
    <variant>/fusedops/index.html       one <a href="FILE#sha256=HEX"> per wheel
    <variant>/fusedops/*.whl            the wheels (unless --base-url points elsewhere)
    whl/torch-A.B.0+<variant>.html      find-links page for one torch minor

so ``pip install fusedops --index-url file://OUT_DIR/cu130`` works.

Variant = the leading ``cuXYZ`` / ``cpu`` of the local version: ``+cu130`` and
``+cu130torch2.11`` are cu130, ``+cpu`` and ``+cputorch2.11`` are cpu.

Why a variant index lists only the stable (abi3) wheels when it has any: PEP 440
compares local versions segment by segment, so ``0.1.0+cu130torch2.11`` sorts
above ``0.1.0+cu130`` and ``+cu130torch2.14`` above ``+cu130torch2.11``. With
classic wheels on the same index pip would pick the newest torch pin and then
replace the user's torch to satisfy it. Classic wheels are served by the
find-links pages instead, one per torch minor (as PyG does): there the wheel
pinned to exactly that torch is the right choice.

Why ``+cu130`` wins over the PyPI wheel: PEP 440 orders ``0.1.0+cu130`` above
``0.1.0`` (a local version sorts after its public version), so a user who adds our
index with ``--extra-index-url`` gets the variant wheel, as with torch's indexes.
``--pypi-flavor`` writes that PyPI wheel: the stable default-variant wheel with
the local suffix stripped (PyPI rejects local versions), its dist-info renamed
and RECORD regenerated.
"""

from __future__ import annotations

import argparse
import base64
import email.parser
import hashlib
import html
import re
import shutil
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

# --- data -------------------------------------------------------------------

PROJECT = "fusedops"
DEFAULT_PYPI_VARIANT = "cu130"  # PyPI's torch 2.11 - 2.14 are cu130 builds
# Torch minors that get a find-links page when some wheel covers them.
KNOWN_TORCH_MINORS = ("2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15")
_VARIANT_RE = re.compile(r"^(cu\d+|cpu|rocm\d+(?:\.\d+)*)(?:torch\d+\.\d+)?$")
_TORCH_LOCAL_RE = re.compile(r"torch(\d+)\.(\d+)$")


class IndexBuildError(ValueError):
    """Bad input for the index (unparseable wheel name, no PyPI candidate, ...)."""


@dataclass(frozen=True)
class WheelEntry:
    filename: str
    sha256: str
    version: Version
    variant: str
    abi3: bool
    torch_spec: SpecifierSet | None
    requires_python: str | None


# --- pure logic ---------------------------------------------------------------


def variant_of(local: str | None) -> str:
    """``cu130torch2.11`` -> ``cu130``; ``cpu`` -> ``cpu``."""
    m = _VARIANT_RE.match(local or "")
    if not m:
        raise IndexBuildError(
            f"local version +{local} names no variant (expected +cuXYZ or +cpu...)"
        )
    return m.group(1)


def _metadata_fields(metadata_text: str | None) -> tuple[SpecifierSet | None, str | None]:
    if not metadata_text:
        return None, None
    meta = email.parser.HeaderParser().parsestr(metadata_text)
    spec = None
    for line in meta.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) == "torch" and req.marker is None:
            spec = req.specifier
    return spec, meta.get("Requires-Python")


def make_entry(filename: str, sha256: str, metadata_text: str | None = None) -> WheelEntry:
    """Parse a wheel filename (+ its METADATA) into an index entry."""
    try:
        name, version, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        raise IndexBuildError(f"not a wheel filename: {filename}: {exc}") from None
    if name != PROJECT:
        raise IndexBuildError(f"{filename}: project {name}, expected {PROJECT}")
    spec, requires_python = _metadata_fields(metadata_text)
    if spec is None and (m := _TORCH_LOCAL_RE.search(version.local or "")):
        spec = SpecifierSet(f"=={m.group(1)}.{m.group(2)}.*")  # classic wheel without METADATA
    return WheelEntry(
        filename=filename,
        sha256=sha256,
        version=version,
        variant=variant_of(version.local),
        abi3=any(t.abi == "abi3" for t in tags),
        torch_spec=spec,
        requires_python=requires_python,
    )


def group_by_variant(entries: Iterable[WheelEntry]) -> dict[str, list[WheelEntry]]:
    groups: dict[str, list[WheelEntry]] = {}
    for entry in sorted(entries, key=lambda e: e.filename):
        groups.setdefault(entry.variant, []).append(entry)
    return dict(sorted(groups.items()))


def select_for_index(entries: Sequence[WheelEntry]) -> list[WheelEntry]:
    """The wheels a variant's PEP 503 index lists: the stable ones if there are any.

    See the module docstring: a torch-pinned classic wheel would outrank them.
    """
    stable = [e for e in entries if e.abi3]
    return stable or list(entries)


def covers(entry: WheelEntry, torch_minor: str) -> bool:
    return entry.torch_spec is not None and entry.torch_spec.contains(f"{torch_minor}.0")


def find_links_pages(
    entries: Iterable[WheelEntry], torch_minors: Iterable[str] = KNOWN_TORCH_MINORS
) -> dict[str, list[WheelEntry]]:
    """``torch-A.B.0+<variant>.html`` -> the wheels that run on that torch minor."""
    entries = list(entries)
    minors = set(torch_minors)
    for e in entries:  # classic pins add their own minor
        for spec in e.torch_spec or ():
            if spec.operator == "==" and (m := re.match(r"(\d+\.\d+)", spec.version)):
                minors.add(m.group(1))
    pages: dict[str, list[WheelEntry]] = {}
    for variant, group in group_by_variant(entries).items():
        for minor in sorted(minors, key=lambda v: Version(v)):
            if hits := [e for e in group if covers(e, minor)]:
                pages[f"torch-{minor}.0+{variant}.html"] = hits
    return pages


def wheel_href(filename: str, sha256: str, base: str) -> str:
    """URL of a wheel (base is "" / a relative prefix / an absolute URL) with its hash."""
    prefix = f"{base.rstrip('/')}/" if base else ""
    return f"{prefix}{quote(filename)}#sha256={sha256}"


def _page(title: str, body: Sequence[str]) -> str:
    lines = [
        "<!DOCTYPE html>",
        "<html>",
        "  <head>",
        '    <meta name="pypi:repository-version" content="1.0">',
        f"    <title>{html.escape(title)}</title>",
        "  </head>",
        "  <body>",
        f"    <h1>{html.escape(title)}</h1>",
        *(f"    {line}" for line in body),
        "  </body>",
        "</html>",
    ]
    return "\n".join(lines) + "\n"


def _anchor(entry: WheelEntry, href: str) -> str:
    attrs = f'href="{html.escape(href)}"'
    if entry.requires_python:  # PEP 503: lets pip skip wheels for other Pythons early
        attrs += f' data-requires-python="{html.escape(entry.requires_python)}"'
    return f"<a {attrs}>{html.escape(entry.filename)}</a><br>"


def render_root_index(projects: Sequence[str]) -> str:
    """PEP 503 root page: one link per project."""
    body = [f'<a href="{quote(p)}/">{html.escape(p)}</a><br>' for p in sorted(projects)]
    return _page("Simple index", body)


def render_project_page(project: str, entries: Sequence[WheelEntry], base: str = "") -> str:
    """PEP 503 project page with sha256 fragments."""
    body = [_anchor(e, wheel_href(e.filename, e.sha256, base)) for e in entries]
    return _page(f"Links for {project}", body)


def render_find_links_page(
    title: str, entries: Sequence[WheelEntry], href: Callable[[WheelEntry], str]
) -> str:
    """A flat ``pip --find-links`` page."""
    return _page(title, [_anchor(e, href(e)) for e in entries])


def render_landing(variants: Mapping[str, Sequence[WheelEntry]], pages: Sequence[str]) -> str:
    """Human page: each variant's pip command, its wheels and the find-links pages."""
    body = ["<p>Pick the index that matches your torch's CUDA (torch.version.cuda).</p>", "<ul>"]
    for variant, entries in variants.items():
        cmd = f"pip install fusedops --index-url &lt;this URL&gt;/{variant}/"
        names = ", ".join(html.escape(e.filename) for e in entries)
        body.append(f'  <li><a href="{variant}/">{variant}</a>: <code>{cmd}</code> ({names})</li>')
    body.append("</ul>")
    if pages:
        body.append("<p>Per-torch pages for <code>pip install fusedops -f PAGE</code>:</p>")
        body.append("<ul>")
        body += [f'  <li><a href="whl/{quote(p)}">{html.escape(p)}</a></li>' for p in pages]
        body.append("</ul>")
    return _page("fusedops wheels", body)


def record_hash(data: bytes) -> str:
    """RECORD-style hash: urlsafe base64 sha256 without padding."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def render_record(members: Sequence[tuple[str, bytes]], record_path: str) -> bytes:
    """A RECORD listing every member (RECORD itself without hash)."""
    lines = [
        f"{path},{record_hash(data)},{len(data)}" for path, data in members if path != record_path
    ]
    lines.append(f"{record_path},,")
    return ("\n".join(lines) + "\n").encode()


def strip_local_members(
    members: Sequence[tuple[str, bytes]], old_version: str, new_version: str
) -> list[tuple[str, bytes]]:
    """Rename ``<name>-<old>.dist-info/`` (and .data/), set METADATA Version, new RECORD."""
    old_prefixes = {
        f"{PROJECT}-{old_version}.{d}/": f"{PROJECT}-{new_version}.{d}/"
        for d in ("dist-info", "data")
    }
    dist_info = f"{PROJECT}-{new_version}.dist-info/"
    out: list[tuple[str, bytes]] = []
    for path, data in members:
        for old, new in old_prefixes.items():
            if path.startswith(old):
                path = new + path[len(old) :]
        if path == dist_info + "RECORD":
            continue
        if path == dist_info + "METADATA":
            data, n = re.subn(
                rb"(?m)^Version: .*$", f"Version: {new_version}".encode(), data, count=1
            )
            if n != 1:
                raise IndexBuildError("METADATA has no Version field")
        out.append((path, data))
    if not any(p.startswith(dist_info) for p, _ in out):
        raise IndexBuildError(f"no {PROJECT}-{old_version}.dist-info/ in the wheel")
    record = dist_info + "RECORD"
    out.append((record, render_record(out, record)))
    return out


def pypi_candidate(
    entries: Iterable[WheelEntry], variant: str = DEFAULT_PYPI_VARIANT
) -> WheelEntry:
    """The stable wheel of the default variant (local version exactly ``+<variant>``)."""
    hits = [e for e in entries if e.abi3 and e.version.local == variant]
    if len(hits) != 1:
        found = ", ".join(e.filename for e in hits) or "none"
        raise IndexBuildError(
            f"need exactly one stable +{variant} wheel for the PyPI flavor, found {found}"
        )
    return hits[0]


# --- I/O ----------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_metadata(wheel: Path) -> str | None:
    if not zipfile.is_zipfile(wheel):
        raise IndexBuildError(f"{wheel} is not a zip file")
    with zipfile.ZipFile(wheel) as zf:
        name = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        return zf.read(name).decode() if name else None


def scan_wheels(wheel_dir: Path) -> dict[Path, WheelEntry]:
    wheels = sorted(Path(wheel_dir).glob(f"{PROJECT}-*.whl"))
    if not wheels:
        raise IndexBuildError(f"no {PROJECT}-*.whl in {wheel_dir}")
    for wheel in wheels:  # a bad name is the clearer error, so check names before opening
        make_entry(wheel.name, "")
    return {w: make_entry(w.name, sha256_file(w), read_metadata(w)) for w in wheels}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def build_index(
    wheel_dir: Path,
    out_dir: Path,
    base_url: str | None = None,
    torch_minors: Sequence[str] = KNOWN_TORCH_MINORS,
) -> list[Path]:
    """Write every page (and copy the wheels unless ``base_url``); return the pages."""
    scanned = scan_wheels(wheel_dir)
    by_path = {e.filename: p for p, e in scanned.items()}
    variants = group_by_variant(scanned.values())
    written: list[Path] = []
    for variant, entries in variants.items():
        vdir = Path(out_dir) / variant
        written.append(_write(vdir / "index.html", render_root_index([PROJECT])))
        listed = select_for_index(entries)
        written.append(
            _write(
                vdir / PROJECT / "index.html", render_project_page(PROJECT, listed, base_url or "")
            )
        )
        if base_url is None:  # find-links pages point here too, so copy every wheel
            for entry in entries:
                dest = vdir / PROJECT / entry.filename
                if (
                    not dest.exists()
                    or dest.stat().st_size != by_path[entry.filename].stat().st_size
                ):
                    shutil.copy2(by_path[entry.filename], dest)
    pages = find_links_pages(scanned.values(), torch_minors)

    def href(entry: WheelEntry) -> str:
        return wheel_href(entry.filename, entry.sha256, base_url or f"../{entry.variant}/{PROJECT}")

    for page, entries in pages.items():
        title = f"fusedops wheels for {page.removesuffix('.html')}"
        written.append(
            _write(Path(out_dir) / "whl" / page, render_find_links_page(title, entries, href))
        )
    written.append(_write(Path(out_dir) / "index.html", render_landing(variants, list(pages))))
    return written


def make_pypi_flavor(wheel_dir: Path, out_dir: Path, variant: str = DEFAULT_PYPI_VARIANT) -> Path:
    """Write the PyPI copy of the default variant's stable wheel (no local version)."""
    scanned = scan_wheels(wheel_dir)
    entry = pypi_candidate(scanned.values(), variant)
    src = next(p for p, e in scanned.items() if e is entry)
    old, new = str(entry.version), entry.version.public
    with zipfile.ZipFile(src) as zf:
        infos = zf.infolist()
        members = [(i.filename, zf.read(i)) for i in infos if not i.is_dir()]
    rewritten = strip_local_members(members, old, new)
    template = {i.filename: i for i in infos}
    dest = Path(out_dir) / src.name.replace(f"-{old}-", f"-{new}-", 1)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in rewritten:
            old_path = path.replace(f"-{new}.", f"-{old}.", 1)
            info = template.get(path) or template.get(old_path)
            # Keep timestamps and permissions (the .so's exec bits) of the original.
            zi = zipfile.ZipInfo(path, date_time=info.date_time if info else (1980, 1, 1, 0, 0, 0))
            zi.external_attr = info.external_attr if info else 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return dest


# --- CLI ----------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("wheel_dir", type=Path, help="directory holding fusedops-*.whl")
    p.add_argument("out_dir", type=Path, nargs="?", help="where the index tree is written")
    p.add_argument("--base-url", help="link wheels at URL/<file> instead of copying them")
    p.add_argument(
        "--torch-minors", default=" ".join(KNOWN_TORCH_MINORS), help="minors for find-links pages"
    )
    p.add_argument("--pypi-flavor", type=Path, metavar="OUT", help="write the PyPI wheel into OUT")
    p.add_argument("--pypi-variant", default=DEFAULT_PYPI_VARIANT, help="variant PyPI gets")
    args = p.parse_args(argv)
    if args.out_dir is None and args.pypi_flavor is None:
        p.error("give OUT_DIR, --pypi-flavor OUT, or both")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.out_dir is not None:
            pages = build_index(
                args.wheel_dir, args.out_dir, args.base_url, args.torch_minors.split()
            )
            print(f"wrote {len(pages)} pages under {args.out_dir}")
        if args.pypi_flavor is not None:
            print(make_pypi_flavor(args.wheel_dir, args.pypi_flavor, args.pypi_variant))
    except (IndexBuildError, OSError, zipfile.BadZipFile) as exc:
        print(f"make_index: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
