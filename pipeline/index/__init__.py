"""Per-variant PEP 503 indexes and per-torch find-links pages.

    python -m pipeline index WHEEL_DIR OUT_DIR [--base-url URL] [--torch-minors "2.9 2.10"]
    python -m pipeline index --releases-url URL --release TAG=DIR [--release TAG=DIR ...] OUT_DIR

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
variant wheel, as with torch's indexes. The PyPI wheel itself is not made
here: it is the multi-library wheel of `pipeline.pypi_wheel`
(``python -m pipeline pypi-wheel``).

Wheels are compared by content (sha256), never by size or time: a rebuilt
wheel replaces the old copy, and every page links the hash of the file next to
it. Files are written to a temporary name and renamed, so an interrupted run
leaves no half-written wheel or page.

Modules, one job each:

    route.py    which variant a wheel belongs to (`route`), `WheelEntry`, find-links grouping
    render.py   the HTML pages and `install_command` (pure)
    files.py    reading wheels, metadata and releases; atomic writes; `build_index`,
                `build_release_index`, `write_index`, `write_metadata_files`
    cli.py      ``python -m pipeline index``: `parse_args`, `main`
"""

from __future__ import annotations

from .cli import DESCRIPTION, USAGE_FORMS, main, parse_args
from .files import (
    METADATA_SUFFIX,
    IndexResult,
    Located,
    Release,
    _atomic,
    build_index,
    build_release_index,
    locate_dir,
    locate_releases,
    metadata_path,
    read_metadata,
    read_metadata_bytes,
    served_metadata_sha256,
    sha256_file,
    write_index,
    write_metadata_files,
)
from .render import (
    INSTALLERS,
    install_command,
    render_find_links_page,
    render_landing,
    render_project_page,
    render_root_index,
    wheel_href,
)
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

__all__ = [
    "DESCRIPTION",
    "INSTALLERS",
    "METADATA_SUFFIX",
    "USAGE_FORMS",
    "IndexBuildError",
    "IndexResult",
    "Located",
    "Release",
    "WheelEntry",
    "_atomic",
    "build_index",
    "build_release_index",
    "default_torch_minors",
    "find_links_pages",
    "group_by_variant",
    "install_command",
    "locate_dir",
    "locate_releases",
    "main",
    "make_entry",
    "metadata_path",
    "parse_args",
    "read_metadata",
    "read_metadata_bytes",
    "render_find_links_page",
    "render_landing",
    "render_project_page",
    "render_root_index",
    "route",
    "select_for_index",
    "served_metadata_sha256",
    "sha256_file",
    "wheel_href",
    "write_index",
    "write_metadata_files",
]
