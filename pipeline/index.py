"""Per-variant PEP 503 indexes, per-torch find-links pages and the PyPI flavor.

    python -m pipeline index WHEEL_DIR OUT_DIR [--base-url URL] [--torch-minors "2.9 2.10"]
    python -m pipeline index --releases-url URL --release TAG=DIR [--release TAG=DIR ...] OUT_DIR
    python -m pipeline index WHEEL_DIR [OUT_DIR] --pypi-flavor DIR [--pypi-variant cu130]

Layout written under OUT_DIR:

    index.html                          human landing page: variants and install commands
    <variant>/index.html                PEP 503 root (lists the project fusedops)
    <variant>/fusedops/index.html       one <a href="FILE#sha256=HEX"> per wheel
    <variant>/fusedops/*.whl            the wheels (unless they are linked elsewhere)
    <variant>/fusedops/*.whl.metadata   their METADATA (PEP 658), next to each copied wheel
    whl/torch-A.B.0+<variant>.html      find-links page for one torch minor

A variant index holds fusedops only, never torch. The documented install
(`install_command`) names two indexes, PyTorch's for the variant and ours:
pip merges them, uv (first-index) asks ours first for each name and falls back
to PyTorch's for torch and its dependencies. Either way PyPI is never asked, so
neither a PyPI fusedops nor another variant's torch can be picked, and a torch
that is already installed and satisfies ``torch>=2.10`` is kept.

Every release stays installable: ``--release TAG=DIR`` (once per published
release) links each wheel of DIR to ``URL/TAG/<file>``, where the GitHub
release holds it, so the Pages index is rebuilt from all releases at each tag.
A file name in two releases stops the run naming both.

PEP 658: every anchor whose ``<wheel>.metadata`` is served carries
``data-dist-info-metadata`` and ``data-core-metadata`` (``sha256=`` of that
file), so resolvers read the metadata without downloading the wheel. Copied
wheels get the file written next to them; linked wheels only advertise it when
``<wheel>.metadata`` lies next to the wheel in its directory (what
`write_metadata_files` writes before the release upload), so an index never
promises a file the release does not hold.

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
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from . import matrix, rules
from .cell import PROJECT, TORCH_INDEX
from .gate.checks import parse_name, torch_requirement
from .gate.cli import OneLineParser, parse_or_status
from .gate.report import GateInputError
from .rules import Variant

METADATA_SUFFIX = ".metadata"


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
    # PEP 658: sha256 (hex) of the <wheel>.metadata served next to the wheel; None: not served
    metadata_sha256: str | None = None

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
    metadata: tuple[Path, ...] = ()  # <wheel>.metadata files written next to the copies

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
    if entry.metadata_sha256:
        # PEP 714's name and PEP 658's original one: pip < 23.3 reads only the latter.
        value = f"sha256={entry.metadata_sha256}"
        attrs += f' data-dist-info-metadata="{value}" data-core-metadata="{value}"'
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


INSTALLERS = ("pip", "uv")


def install_command(installer: str, variant: str, index_root: str) -> str:
    """The documented one-command install of fusedops and a torch of ``variant``.

    Two indexes: PyTorch's for the variant (torch and its dependencies, never
    PyPI) and ours (fusedops only). pip merges both; uv's default first-index
    strategy asks the --extra-index-url first for every name, finds fusedops
    only there and torch only on PyTorch's, so the same flags serve both.
    Neither upgrades a torch that is already installed and satisfies the wheel.
    """
    prefix = {"pip": "pip install", "uv": "uv pip install"}.get(installer)
    if prefix is None:
        raise IndexBuildError(f"installer {installer!r}: expected one of {', '.join(INSTALLERS)}")
    ours = f"{index_root.rstrip('/')}/{variant}"
    return f"{prefix} {PROJECT} --index-url {TORCH_INDEX}/{variant} --extra-index-url {ours}"


def render_landing(variants: Mapping[str, Sequence[WheelEntry]], pages: Sequence[str]) -> str:
    """Human page: each variant's install commands, its wheels and the find-links pages."""
    body = ["<p>Pick the index that matches your torch's CUDA (torch.version.cuda).</p>", "<ul>"]
    for variant, entries in variants.items():
        cmds = " or ".join(
            f"<code>{html.escape(install_command(i, variant, '<this URL>'))}</code>"
            for i in INSTALLERS
        )
        names = ", ".join(html.escape(e.filename) for e in entries)
        body.append(f'  <li><a href="{variant}/">{variant}</a>: {cmds} ({names})</li>')
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


def read_metadata_bytes(wheel: Path) -> bytes | None:
    """The wheel's top-level ``*.dist-info/METADATA``, byte for byte (what PEP 658 serves)."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            name = next(
                (
                    n
                    for n in zf.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                ),
                None,
            )
            return zf.read(name) if name else None
    except (zipfile.BadZipFile, OSError) as exc:
        raise IndexBuildError(f"{wheel.name} is not a readable wheel (zip): {exc}") from None


def read_metadata(wheel: Path) -> str | None:
    data = read_metadata_bytes(wheel)
    return None if data is None else data.decode("utf-8", errors="replace")


def metadata_path(wheel: Path) -> Path:
    """Where PEP 658 serves a wheel's METADATA: the wheel's own URL + ".metadata"."""
    return wheel.with_name(wheel.name + METADATA_SUFFIX)


def write_metadata_files(dist: Path) -> list[Path]:
    """Write ``<wheel>.metadata`` (its METADATA, byte for byte) next to every wheel of ``dist``.

    Uploaded beside the wheels (a GitHub release's assets), they let an index
    that links there advertise PEP 658 metadata.
    """
    wheels = sorted(Path(dist).glob("*.whl"))
    if not wheels:
        raise IndexBuildError(f"no *.whl in {dist}")
    contents = {}
    for wheel in wheels:  # read all first: a bad wheel leaves no partial set behind
        data = read_metadata_bytes(wheel)
        if data is None:
            raise IndexBuildError(f"{wheel.name} has no .dist-info/METADATA")
        contents[wheel] = data
    return [
        _atomic(metadata_path(w), lambda tmp, data=data: tmp.write_bytes(data))
        for w, data in contents.items()
    ]


def served_metadata_sha256(wheel: Path, metadata: bytes | None) -> str | None:
    """sha256 of ``<wheel>.metadata`` lying next to a linked wheel; None when there is none.

    A metadata file that differs from the wheel's METADATA would make pip refuse
    the wheel, so it stops the run instead.
    """
    served = metadata_path(wheel)
    if metadata is None or not served.is_file():
        return None
    if served.read_bytes() != metadata:
        raise IndexBuildError(
            f"{served} differs from the METADATA inside {wheel.name}"
            " (rewrite it with pipeline.index.write_metadata_files)"
        )
    return hashlib.sha256(metadata).hexdigest()


@dataclass(frozen=True)
class Release:
    """One published release: its tag and a directory holding its wheels."""

    tag: str
    wheel_dir: Path

    @classmethod
    def parse(cls, text: str) -> Release:
        """``TAG=DIR`` as the CLI takes it; the tag must be vX.Y.Z (a PEP 440 version)."""
        tag, sep, directory = text.partition("=")
        if not sep or not tag or not directory:
            raise IndexBuildError(f"{text!r} is not TAG=DIR")
        try:
            Version(tag.removeprefix("v"))
        except InvalidVersion:
            raise IndexBuildError(
                f"release tag {tag!r} is not vX.Y.Z (a PEP 440 version)"
            ) from None
        return cls(tag, Path(directory))

    @property
    def version(self) -> Version:
        return Version(self.tag.removeprefix("v"))


@dataclass(frozen=True)
class Located:
    """A wheel on disk, its index entry and where the index links it."""

    path: Path
    entry: WheelEntry
    base: str  # URL prefix of the file; "" when the index serves its own copy
    metadata: bytes | None  # the wheel's METADATA (the index writes it next to its copy)


def _read_dir(wheel_dir: Path) -> list[tuple[Path, WheelEntry, bytes | None]]:
    if not Path(wheel_dir).is_dir():
        raise IndexBuildError(f"{wheel_dir} is not a directory")
    wheels = sorted(Path(wheel_dir).glob("*.whl"))
    if not wheels:
        raise IndexBuildError(f"no *.whl in {wheel_dir}")
    for wheel in wheels:  # a bad name is the clearer error, so check names before opening
        route(wheel.name)
    out = []
    for wheel in wheels:
        meta = read_metadata_bytes(wheel)
        text = None if meta is None else meta.decode("utf-8", errors="replace")
        out.append((wheel, make_entry(wheel.name, sha256_file(wheel), text), meta))
    return out


def scan_wheels(wheel_dir: Path) -> dict[Path, WheelEntry]:
    """Every *.whl of ``wheel_dir`` (all must be fusedops variant wheels), by content."""
    return {path: entry for path, entry, _ in _read_dir(wheel_dir)}


def locate_dir(wheel_dir: Path, base_url: str = "") -> list[Located]:
    """The wheels of one directory: copied into the index, or linked at ``base_url``."""
    located = []
    for path, entry, meta in _read_dir(wheel_dir):
        if base_url:
            digest = served_metadata_sha256(path, meta)
        else:  # the index writes the metadata file next to its copy
            digest = hashlib.sha256(meta).hexdigest() if meta is not None else None
        located.append(Located(path, replace(entry, metadata_sha256=digest), base_url, meta))
    return located


def locate_releases(releases: Sequence[Release], releases_url: str) -> list[Located]:
    """Every release's wheels, each linked at ``releases_url/TAG/<file>``.

    A file name can be one URL only: the same name in two releases stops the
    run, and so does a wheel whose version is not its release's.
    """
    if not releases:
        raise IndexBuildError("no release given")
    tags: dict[str, Path] = {}
    owner: dict[str, str] = {}  # file name -> release tag
    located: list[Located] = []
    for release in releases:
        if release.tag in tags:
            raise IndexBuildError(
                f"release {release.tag} given twice ({tags[release.tag]}, {release.wheel_dir})"
            )
        tags[release.tag] = release.wheel_dir
        base = f"{releases_url.rstrip('/')}/{quote(release.tag)}"
        for item in locate_dir(release.wheel_dir, base):
            name = item.entry.filename
            if name in owner:
                raise IndexBuildError(
                    f"{name} is in two releases, {owner[name]} and {release.tag}:"
                    " an index links one file name to one URL"
                )
            if Version(item.entry.version.public) != release.version:
                raise IndexBuildError(
                    f"release {release.tag} holds {name}, a wheel of"
                    f" {item.entry.version.public}, not of {release.version}"
                )
            owner[name] = release.tag
            located.append(item)
    return located


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


def write_index(
    located: Sequence[Located], out_dir: Path, *, torch_minors: Sequence[str] | None = None
) -> IndexResult:
    """Write every page, and copy the wheels (with their metadata files) that are not linked."""
    out_dir = Path(out_dir)
    by_name = {item.entry.filename: item for item in located}
    entries = [item.entry for item in located]
    variants = group_by_variant(entries)
    pages: list[Path] = []
    copied: list[Path] = []
    unchanged: list[Path] = []
    metadata: list[Path] = []
    listed: dict[str, tuple[str, ...]] = {}

    def href(e: WheelEntry, local: str) -> str:
        return wheel_href(e.filename, e.sha256, by_name[e.filename].base or local)

    for variant, group in variants.items():
        project_dir = out_dir / variant / PROJECT
        # Files before the pages that link them: an interrupted run links nothing missing.
        for e in group:  # find-links pages point at the copies too, so copy every wheel
            item = by_name[e.filename]
            if item.base:
                continue
            dest = project_dir / e.filename
            changed = _copy_if_changed(item.path, dest, e.sha256)
            (copied if changed else unchanged).append(dest)
            if (meta := item.metadata) is not None:
                metadata.append(
                    _atomic(metadata_path(dest), lambda tmp, m=meta: tmp.write_bytes(m))
                )
        pages.append(_write_text(out_dir / variant / "index.html", render_root_index([PROJECT])))
        shown = select_for_index(group)
        listed[variant] = tuple(e.filename for e in shown)
        title = f"Links for {PROJECT}"
        page = render_find_links_page(title, shown, lambda e: href(e, ""))
        pages.append(_write_text(project_dir / "index.html", page))
    links = find_links_pages(entries, torch_minors or default_torch_minors())
    for page_path, group in links.items():
        title = f"{PROJECT} wheels for {Path(page_path).stem}"
        page = render_find_links_page(title, group, lambda e: href(e, f"../{e.variant}/{PROJECT}"))
        pages.append(_write_text(out_dir / page_path, page))
    pages.append(_write_text(out_dir / "index.html", render_landing(variants, list(links))))
    return IndexResult(
        out_dir, listed, tuple(pages), tuple(copied), tuple(unchanged), tuple(metadata)
    )


def build_index(
    wheel_dir: Path,
    out_dir: Path,
    *,
    base_url: str = "",
    torch_minors: Sequence[str] | None = None,
) -> IndexResult:
    """Index one directory's wheels: copied next to the pages, or linked at ``base_url``."""
    return write_index(locate_dir(wheel_dir, base_url), out_dir, torch_minors=torch_minors)


def build_release_index(
    releases: Sequence[Release],
    out_dir: Path,
    *,
    releases_url: str,
    torch_minors: Sequence[str] | None = None,
) -> IndexResult:
    """Index every release's wheels, each linked at ``releases_url/TAG/<file>``."""
    located = locate_releases(releases, releases_url)
    return write_index(located, out_dir, torch_minors=torch_minors)


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


def _releases_url(text: str) -> str:
    if re.search(r"[\s\"'<>]", text) or "://" not in text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an absolute URL (https://..., file://...)"
        )
    return text.rstrip("/")


def _release(text: str) -> Release:
    try:
        return Release.parse(text)
    except IndexBuildError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


USAGE_FORMS = (
    "give WHEEL_DIR OUT_DIR, --release TAG=DIR ... OUT_DIR, or WHEEL_DIR --pypi-flavor DIR"
)


def _check_release_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--release form: the one positional is OUT_DIR; every release directory exists."""
    if args.releases_url is None:
        p.error("--release needs --releases-url (the URL the releases' files download from)")
    if args.base_url:
        p.error("--base-url and --release exclude each other (a release links at URL/TAG)")
    if args.pypi_flavor is not None:
        p.error("--pypi-flavor reads WHEEL_DIR, not --release")
    if args.wheel_dir is None or args.out_dir is not None:
        p.error("with --release give OUT_DIR only (the wheels come from each TAG=DIR)")
    args.out_dir, args.wheel_dir = args.wheel_dir, None
    seen: set[str] = set()
    for release in args.release:
        if release.tag in seen:
            p.error(f"--release {release.tag} given twice")
        seen.add(release.tag)
        if not release.wheel_dir.is_dir():
            p.error(f"--release {release.tag}={release.wheel_dir}: not a directory")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(prog="pipeline index", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("wheel_dir", type=Path, nargs="?", metavar="WHEEL_DIR", help="the wheels")
    p.add_argument("out_dir", type=Path, nargs="?", metavar="OUT_DIR", help="the index tree")
    p.add_argument(
        "--base-url", type=_base_url, default="", help="link wheels at URL/<file>, no copies"
    )
    p.add_argument(
        "--release",
        type=_release,
        action="append",
        default=[],
        metavar="TAG=DIR",
        help="a published release's wheels (repeat for every release); then give OUT_DIR only",
    )
    p.add_argument(
        "--releases-url",
        type=_releases_url,
        metavar="URL",
        help="each --release's wheels are linked at URL/TAG/<file>",
    )
    p.add_argument(
        "--torch-minors", type=_minors, help="minors for find-links pages (default: matrix)"
    )
    p.add_argument("--pypi-flavor", type=Path, metavar="DIR", help="write the PyPI wheel into DIR")
    p.add_argument("--pypi-variant", type=_variant, help="variant PyPI gets (default: matrix)")
    args = p.parse_args(argv)
    if args.release:
        _check_release_args(p, args)
    else:
        if args.releases_url is not None:
            p.error("--releases-url needs --release TAG=DIR")
        if args.wheel_dir is None:
            p.error(USAGE_FORMS)
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
        if args.release:
            res = build_release_index(
                args.release,
                args.out_dir,
                releases_url=args.releases_url,
                torch_minors=args.torch_minors,
            )
        elif args.out_dir is not None:
            res = build_index(
                args.wheel_dir, args.out_dir, base_url=args.base_url, torch_minors=args.torch_minors
            )
        else:
            res = None
        if res is not None:
            releases = f" from {len(args.release)} releases" if args.release else ""
            print(
                f"wrote {len(res.pages)} pages under {args.out_dir}{releases}"
                f" for {', '.join(res.variants)}"
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
