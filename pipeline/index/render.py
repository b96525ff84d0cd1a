"""The index's HTML pages (PEP 503, find-links, landing) and the documented install command.

Pure: strings in, strings out; `files.write_index` writes what these return.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from ..cell import PROJECT, TORCH_INDEX
from .route import IndexBuildError, WheelEntry


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
