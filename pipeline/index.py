"""Per-variant PEP 503 indexes, per-torch find-links pages and the PyPI flavor.

    python -m pipeline index WHEEL_DIR OUT_DIR [--base-url URL] [--torch-minors "2.9 2.10"]
    python -m pipeline index WHEEL_DIR [OUT_DIR] --pypi-flavor DIR [--pypi-variant cu130]

Layout written under OUT_DIR:

    index.html                          human landing page: variants and pip commands
    <variant>/index.html                PEP 503 root (lists the project fusedops)
    <variant>/fusedops/index.html       one <a href="FILE#sha256=HEX"> per wheel
    <variant>/fusedops/*.whl            the wheels (unless --base-url points elsewhere)
    whl/torch-A.B.0+<variant>.html      find-links page for one torch minor

so ``pip install fusedops --index-url file://OUT_DIR/cu130`` works.

Which variant a wheel belongs to is read from its local version with the same
rule that wrote it (`pipeline.rules.local_version`): ``+cu130`` and
``+cu130torch2.11`` are cu130, ``+cpu`` and ``+cputorch2.11`` are cpu. A name
that rule would not have written (``+CU130``, ``+cu130torch2.09``, another
project's wheel) is refused, so two directories can never differ only by case.

Why a variant index lists only the stable (abi3) wheels when it has any: PEP 440
compares local versions segment by segment, so ``0.1.0+cu130torch2.11`` sorts
above ``0.1.0+cu130`` and ``+cu130torch2.14`` above ``+cu130torch2.11``. With
classic wheels on the same index pip would pick the newest torch pin and then
replace the user's torch to satisfy it. Classic wheels are served by the
find-links pages instead, one per torch minor: there the wheel pinned to
exactly that torch is the right choice.

Why ``+cu130`` wins over the PyPI wheel: PEP 440 orders ``0.1.0+cu130`` above
``0.1.0``, so a user who adds our index with ``--extra-index-url`` gets the
variant wheel, as with torch's indexes. ``--pypi-flavor`` writes that PyPI
wheel: the stable default-variant wheel with the local label stripped (PyPI
rejects local versions), its dist-info renamed and RECORD regenerated.

Wheels are compared by content (sha256), never by size or time: a rebuilt
wheel replaces the old copy, and every page links the hash of the file next to
it. Files are written to a temporary name and renamed, so an interrupted run
leaves no half-written wheel or page.
"""

from __future__ import annotations

import argparse
import base64
import email.parser
import hashlib
import html
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from . import matrix, rules
from .cell import PROJECT
from .gate.checks import parse_name, torch_requirement
from .gate.cli import OneLineParser, parse_or_status
from .gate.report import GateInputError
from .rules import Variant


class IndexBuildError(ValueError):
    """Bad input for the index (a wheel name the pipeline did not write, no PyPI candidate, ...)."""


@dataclass(frozen=True)
class WheelEntry:
    filename: str
    sha256: str  # hex, as PEP 503 fragments want it
    version: Version
    variant: Variant
    abi: str  # "stable" | "classic", from the local version
    torch_spec: SpecifierSet
    requires_python: str | None

    @property
    def stable(self) -> bool:
        return self.abi == "stable"


@dataclass(frozen=True)
class IndexResult:
    out_dir: Path
    listed: Mapping[str, tuple[str, ...]]  # variant -> the wheels its PEP 503 page lists
    pages: tuple[Path, ...]  # every HTML page written
    copied: tuple[Path, ...]  # wheels written into the tree (new, or content changed)
    unchanged: tuple[Path, ...]  # wheels already there with the same sha256

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(self.listed)


# --- routing: one rule -----------------------------------------------------------------


def route(filename: str) -> tuple[Version, Variant, str]:
    """(version, variant, abi) of a fusedops wheel name, or IndexBuildError saying why not."""
    try:
        wheel = parse_name(filename)
    except GateInputError as exc:
        raise IndexBuildError(str(exc)) from None
    version, tags = wheel.version, wheel.tags
    written = filename.split("-")[1]
    if written != str(version) or filename != filename.lower():
        why = "differs only by case from" if written.lower() == str(version) else "is not"
        raise IndexBuildError(
            f"{filename}: {written!r} {why} the canonical {str(version)!r}, and the pipeline"
            " only writes lower-case canonical names (index directories must not differ by case)"
        )
    if version.local is None:
        raise IndexBuildError(
            f"{filename}: no local version (+cu130, +cpu): a PyPI wheel, not a variant wheel"
        )
    head, sep, torch = version.local.partition("torch")
    abi = "classic" if sep else "stable"
    try:
        variant = Variant.parse(head)
        canonical = rules.local_version(variant, abi, torch or "0")
    except ValueError:
        canonical = None
    if canonical != version.local:
        raise IndexBuildError(
            f"{filename}: local version +{version.local} names no variant"
            " (expected +cuXYZ or +cpu, optionally followed by torchA.B)"
        )
    if any(t.abi == "abi3" for t in tags) != (abi == "stable"):
        raise IndexBuildError(
            f"{filename}: a {abi}-ABI local version with tags {sorted(map(str, tags))}"
        )
    return version, variant, abi


def _metadata_fields(metadata_text: str | None) -> tuple[SpecifierSet | None, str | None]:
    meta = email.parser.HeaderParser().parsestr(metadata_text or "")
    return torch_requirement(metadata_text), meta.get("Requires-Python")


def make_entry(filename: str, sha256: str, metadata_text: str | None = None) -> WheelEntry:
    """An index entry from a wheel's name and METADATA (the torch pin falls back to the rule)."""
    version, variant, abi = route(filename)
    spec, requires_python = _metadata_fields(metadata_text)
    if spec is None:
        torch = version.local.partition("torch")[2] if version.local else ""
        spec = SpecifierSet(rules.torch_requirement(abi, torch or "0"))
    return WheelEntry(filename, sha256, version, variant, abi, spec, requires_python)


def group_by_variant(entries: Iterable[WheelEntry]) -> dict[str, list[WheelEntry]]:
    groups: dict[str, list[WheelEntry]] = {}
    for entry in sorted(entries, key=lambda e: e.filename):
        groups.setdefault(str(entry.variant), []).append(entry)
    return dict(sorted(groups.items()))


def select_for_index(entries: Sequence[WheelEntry]) -> list[WheelEntry]:
    """The wheels a variant's PEP 503 index lists: the stable ones if there are any."""
    return [e for e in entries if e.stable] or list(entries)


def default_torch_minors() -> tuple[str, ...]:
    """The torch minors of the matrix: each gets a find-links page where a wheel covers it."""
    return tuple(t.minor for t in matrix.load().torch)


def find_links_pages(
    entries: Iterable[WheelEntry], torch_minors: Iterable[str]
) -> dict[str, list[WheelEntry]]:
    """``whl/torch-A.B.0+<variant>.html`` -> the wheels that run on that torch minor."""
    entries = list(entries)
    minors = set(torch_minors)
    for e in entries:  # classic pins add their own minor
        for spec in e.torch_spec:
            if spec.operator == "==":  # '==2.9.*' pins minor 2.9
                major, minor = (*Version(spec.version.removesuffix(".*")).release, 0)[:2]
                minors.add(f"{major}.{minor}")
    pages: dict[str, list[WheelEntry]] = {}
    for group in group_by_variant(entries).values():
        for minor in sorted(minors, key=Version):
            torch = f"{minor}.0"
            if hits := [e for e in group if e.torch_spec.contains(torch)]:
                pages[rules.find_links_page(group[0].variant, torch)] = hits
    return pages


# --- rendering (pure) ------------------------------------------------------------------


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
        cmd = f"pip install {PROJECT} --index-url &lt;this URL&gt;/{variant}/"
        names = ", ".join(html.escape(e.filename) for e in entries)
        body.append(f'  <li><a href="{variant}/">{variant}</a>: <code>{cmd}</code> ({names})</li>')
    body.append("</ul>")
    if pages:
        body.append(f"<p>Per-torch pages for <code>pip install {PROJECT} -f PAGE</code>:</p>")
        body.append("<ul>")
        body += [f'  <li><a href="{quote(p)}">{html.escape(Path(p).name)}</a></li>' for p in pages]
        body.append("</ul>")
    return _page(f"{PROJECT} wheels", body)


def record_hash(data: bytes) -> str:
    """RECORD-style hash: urlsafe base64 sha256 without padding."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def render_record(members: Sequence[tuple[str, bytes]], record_path: str) -> bytes:
    """A RECORD listing every member (RECORD itself without hash)."""
    lines = [f"{p},{record_hash(d)},{len(d)}" for p, d in members if p != record_path]
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


def pypi_candidate(entries: Iterable[WheelEntry], variant: Variant) -> WheelEntry:
    """The stable wheel of the PyPI variant (local version exactly ``+<variant>``)."""
    hits = [e for e in entries if e.stable and e.variant == variant]
    if len(hits) != 1:
        found = ", ".join(e.filename for e in hits) or "none"
        raise IndexBuildError(
            f"need exactly one stable +{variant} wheel for the PyPI flavor, found {found}"
        )
    return hits[0]


# --- I/O -------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_metadata(wheel: Path) -> str | None:
    try:
        with zipfile.ZipFile(wheel) as zf:
            name = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
            return zf.read(name).decode("utf-8", errors="replace") if name else None
    except (zipfile.BadZipFile, OSError) as exc:
        raise IndexBuildError(f"{wheel.name} is not a readable wheel (zip): {exc}") from None


def scan_wheels(wheel_dir: Path) -> dict[Path, WheelEntry]:
    """Every *.whl of ``wheel_dir`` (all must be fusedops variant wheels), by content."""
    if not Path(wheel_dir).is_dir():
        raise IndexBuildError(f"{wheel_dir} is not a directory")
    wheels = sorted(Path(wheel_dir).glob("*.whl"))
    if not wheels:
        raise IndexBuildError(f"no *.whl in {wheel_dir}")
    for wheel in wheels:  # a bad name is the clearer error, so check names before opening
        route(wheel.name)
    return {w: make_entry(w.name, sha256_file(w), read_metadata(w)) for w in wheels}


def _atomic(dest: Path, write: Callable[[Path], object]) -> Path:
    """Write through a temporary file in the same directory, then rename over ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def _write_text(path: Path, text: str) -> Path:
    return _atomic(path, lambda tmp: tmp.write_text(text))


def _copy_if_changed(src: Path, dest: Path, sha256: str) -> bool:
    """Copy ``src`` to ``dest`` unless ``dest`` already has this content; True if copied."""
    if dest.is_file() and sha256_file(dest) == sha256:
        return False
    _atomic(dest, lambda tmp: shutil.copyfile(src, tmp))
    return True


def build_index(
    wheel_dir: Path,
    out_dir: Path,
    *,
    base_url: str = "",
    torch_minors: Sequence[str] | None = None,
) -> IndexResult:
    """Write every page (and copy the wheels unless ``base_url`` links them elsewhere)."""
    scanned = scan_wheels(wheel_dir)
    out_dir = Path(out_dir)
    by_name = {e.filename: p for p, e in scanned.items()}
    variants = group_by_variant(scanned.values())
    pages: list[Path] = []
    copied: list[Path] = []
    unchanged: list[Path] = []
    listed: dict[str, tuple[str, ...]] = {}
    for variant, entries in variants.items():
        project_dir = out_dir / variant / PROJECT
        pages.append(_write_text(out_dir / variant / "index.html", render_root_index([PROJECT])))
        shown = select_for_index(entries)
        listed[variant] = tuple(e.filename for e in shown)
        page = render_project_page(PROJECT, shown, base_url)
        pages.append(_write_text(project_dir / "index.html", page))
        if not base_url:  # find-links pages point here too, so copy every wheel
            for e in entries:
                dest = project_dir / e.filename
                changed = _copy_if_changed(by_name[e.filename], dest, e.sha256)
                (copied if changed else unchanged).append(dest)
    links = find_links_pages(scanned.values(), torch_minors or default_torch_minors())
    for page_path, entries in links.items():
        title = f"{PROJECT} wheels for {Path(page_path).stem}"

        def href(e: WheelEntry) -> str:
            return wheel_href(e.filename, e.sha256, base_url or f"../{e.variant}/{PROJECT}")

        pages.append(_write_text(out_dir / page_path, render_find_links_page(title, entries, href)))
    pages.append(_write_text(out_dir / "index.html", render_landing(variants, list(links))))
    return IndexResult(out_dir, listed, tuple(pages), tuple(copied), tuple(unchanged))


def make_pypi_flavor(wheel_dir: Path, out_dir: Path, variant: Variant | None = None) -> Path:
    """Write the PyPI copy of the PyPI variant's stable wheel (no local version)."""
    variant = variant or matrix.load().pypi_variant
    scanned = scan_wheels(wheel_dir)
    entry = pypi_candidate(scanned.values(), variant)
    src = next(p for p, e in scanned.items() if e is entry)
    old, new = str(entry.version), entry.version.public
    with zipfile.ZipFile(src) as zf:
        infos = zf.infolist()
        members = [(i.filename, zf.read(i)) for i in infos if not i.is_dir()]
    rewritten = strip_local_members(members, old, new)
    template = {i.filename: i for i in infos}

    def write(tmp: Path) -> None:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, data in rewritten:
                info = template.get(path) or template.get(path.replace(f"-{new}.", f"-{old}.", 1))
                # Keep timestamps and permissions (the .so's exec bits) of the original.
                zi = zipfile.ZipInfo(
                    path, date_time=info.date_time if info else (1980, 1, 1, 0, 0, 0)
                )
                zi.external_attr = info.external_attr if info else 0o644 << 16
                zi.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(zi, data)

    return _atomic(Path(out_dir) / src.name.replace(f"-{old}-", f"-{new}-", 1), write)


# --- CLI -------------------------------------------------------------------------------


def _minors(text: str) -> list[str]:
    minors = text.replace(",", " ").split()
    for m in minors:
        try:
            ok = len(Version(m).release) == 2 and str(Version(m)) == m
        except InvalidVersion:
            ok = False
        if not ok:
            raise argparse.ArgumentTypeError(f"{m!r} is not a torch minor like 2.14")
    return minors


def _variant(text: str) -> Variant:
    try:
        return Variant.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _base_url(text: str) -> str:
    if re.search(r"[\s\"'<>]", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL prefix")
    return text


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(prog="pipeline index", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("wheel_dir", type=Path, help="directory holding the fusedops wheels")
    p.add_argument("out_dir", type=Path, nargs="?", help="where the index tree is written")
    p.add_argument(
        "--base-url", type=_base_url, default="", help="link wheels at URL/<file>, no copies"
    )
    p.add_argument(
        "--torch-minors", type=_minors, help="minors for find-links pages (default: matrix)"
    )
    p.add_argument("--pypi-flavor", type=Path, metavar="DIR", help="write the PyPI wheel into DIR")
    p.add_argument("--pypi-variant", type=_variant, help="variant PyPI gets (default: matrix)")
    args = p.parse_args(argv)
    if args.out_dir is None and args.pypi_flavor is None:
        p.error("give OUT_DIR, --pypi-flavor DIR, or both")
    if not args.wheel_dir.is_dir():
        p.error(f"WHEEL_DIR {args.wheel_dir} is not a directory")
    for flag, path in (("OUT_DIR", args.out_dir), ("--pypi-flavor", args.pypi_flavor)):
        if path is not None and path.exists() and not path.is_dir():
            p.error(f"{flag} {path} exists and is not a directory")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_or_status(parse_args, argv)
    if isinstance(args, int):
        return args
    try:
        if args.out_dir is not None:
            res = build_index(
                args.wheel_dir, args.out_dir, base_url=args.base_url, torch_minors=args.torch_minors
            )
            print(
                f"wrote {len(res.pages)} pages under {args.out_dir} for {', '.join(res.variants)}"
                f" ({len(res.copied)} wheels copied, {len(res.unchanged)} unchanged)"
            )
        if args.pypi_flavor is not None:
            print(make_pypi_flavor(args.wheel_dir, args.pypi_flavor, args.pypi_variant))
    except (IndexBuildError, matrix.MatrixError) as exc:
        print(f"pipeline index: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"pipeline index: error: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 1
    return 0
