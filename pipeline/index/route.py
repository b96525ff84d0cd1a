"""Which variant directory a wheel belongs to, its index entry, and the find-links grouping.

One rule routes every wheel: the local version the pipeline wrote
(`pipeline.rules.local_version`). Anything that rule would not have written is
refused with `IndexBuildError`. Pure: no file is read or written here.
"""

from __future__ import annotations

import email.parser
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .. import matrix, rules
from ..gate.checks import parse_name, torch_requirement
from ..gate.report import GateInputError
from ..rules import Variant


class IndexBuildError(ValueError):
    """Bad input for the index (a wheel name the pipeline did not write, a bad release, ...)."""


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
