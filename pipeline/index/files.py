"""The index's I/O: reading wheels and releases, writing the tree atomically.

`build_index` (one directory) and `build_release_index` (every release) locate
the wheels and hand them to `write_index`; `write_metadata_files` writes the
PEP 658 ``<wheel>.metadata`` files a release uploads beside its wheels.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from packaging.version import InvalidVersion, Version

from ..cell import PROJECT
from .render import render_find_links_page, render_landing, render_root_index, wheel_href
from .route import (
    IndexBuildError,
    WheelEntry,
    default_torch_minors,
    find_links_pages,
    group_by_variant,
    make_entry,
    route,
    select_for_index,
)

METADATA_SUFFIX = ".metadata"


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
