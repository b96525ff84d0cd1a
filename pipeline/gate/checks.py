"""Pure checks of a wheel's name, tags and metadata against the cell it was built for.

Every expectation is a property of the Cell (wheel_tag, local_version,
torch_requirement, python_requirement, archs, variant). Without a cell the
gate checks the wheel against the cell its own BUILD_INFO implies
(`implied_cell`), so there is one code path and no second derivation.
"""

from __future__ import annotations

import ast
import email.message
import email.parser
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ..archs import ArchList, ArchListError
from ..cell import PROJECT, Cell, Platform
from ..provenance import short_commit
from ..repair import policy_glibc
from ..rules import STABLE_MIN_PYTHON, Variant
from .report import FAIL, PASS, CheckResult, GateInputError, result

BUILD_INFO_KEYS = ("version", "torch", "cuda", "abi", "arch_list", "git_sha", "variant")
# Pythons a Requires-Python is probed with: the wheel must admit all the cell promises.
_PYTHON_SAMPLES = [f"3.{m}" for m in range(6, 20)]


@dataclass(frozen=True)
class WheelName:
    filename: str
    version: Version
    tags: frozenset[Tag]

    @property
    def platforms(self) -> list[str]:
        return sorted({t.platform for t in self.tags})


def parse_name(filename: str) -> WheelName:
    """A fusedops wheel's filename, or GateInputError saying why it is not one."""
    try:
        name, version, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        raise GateInputError(f"{filename}: not a wheel filename ({exc})") from None
    if name != PROJECT:
        raise GateInputError(f"{filename}: a wheel of {name!r}, not {PROJECT}")
    return WheelName(filename, version, tags)


def parse_metadata(text: str) -> email.message.Message:
    return email.parser.HeaderParser().parsestr(text)


def parse_build_info(source: str) -> dict[str, Any]:
    """``BUILD_INFO = {...}`` from _build_info.py, read as a literal (never executed)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"not Python: {exc.msg} (line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "BUILD_INFO" for t in targets):
            value = ast.literal_eval(node.value)  # type: ignore[arg-type]
            if not isinstance(value, dict):
                raise ValueError("BUILD_INFO is not a dict")
            return value
    raise ValueError("no BUILD_INFO = {...} assignment")


def implied_cell(build_info: Mapping[str, Any] | None, wheel: WheelName) -> Cell | None:
    """The cell a wheel's BUILD_INFO describes (None when BUILD_INFO cannot say).

    The Python of a classic cell is the one its tag names; a stable cell's is the
    limited-API floor. The platform fields are not checked by the gate.
    """
    if not build_info:
        return None
    try:
        abi = str(build_info["abi"])
        archs = build_info.get("arch_list") or None
        interpreters = {t.interpreter for t in wheel.tags}
        if abi == "stable":
            python = "{}.{}".format(*STABLE_MIN_PYTHON)
        elif abi == "classic" and len(interpreters) == 1:
            digits = next(iter(interpreters)).removeprefix("cp")
            python = f"{digits[0]}.{digits[1:]}"
        else:
            return None
        machine = wheel.platforms[0].split("_", 1)[-1] if wheel.platforms else "unknown"
        machine = re.sub(r"^\d+_\d+_", "", machine)  # manylinux_2_28_x86_64 -> x86_64
        variant = Variant.parse(str(build_info["variant"]))
        return Cell(
            abi=abi,
            variant=variant,
            torch=Version(str(build_info["torch"])),
            python=python,
            platform=Platform(f"linux_{machine}", runner="", manylinux_image=""),
            archs=ArchList.parse(list(archs)) if archs else None,
            gcc=None,
            # A single-library wheel is never the PyPI wheel: that one carries a library
            # per family (fusedops/_lib/<family>/) and is checked part by part.
            pypi_part=False,
        )
    except (KeyError, ValueError, TypeError, InvalidVersion):
        return None


def check_platform_tag(wheel: WheelName) -> CheckResult:
    """The filename must carry a manylinux tag: a bare linux_* wheel is unrepaired."""
    bad = [p for p in wheel.platforms if policy_glibc(p) is None]
    if bad:
        unrepaired = any(p.startswith("linux_") for p in bad)
        hint = " (unrepaired: run `python -m pipeline repair`)" if unrepaired else ""
        return CheckResult(
            "platform-tag", FAIL, f"platform tag {', '.join(bad)} is not manylinux{hint}"
        )
    return CheckResult("platform-tag", PASS, ", ".join(wheel.platforms))


def parse_wheel_tags(wheel_text: str) -> set[str]:
    """``Tag:`` lines of a WHEEL file."""
    return {
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    }


def check_tags(wheel: WheelName, cell: Cell | None, wheel_text: str | None) -> CheckResult:
    """The python-abi tag is the cell's wheel_tag; the WHEEL file agrees with the filename."""
    name = "wheel-tags"
    pairs = sorted({f"{t.interpreter}-{t.abi}" for t in wheel.tags})
    problems = []
    if cell is None:
        problems.append("no cell and no usable BUILD_INFO: the expected ABI is unknown")
    elif pairs != [cell.wheel_tag]:
        problems.append(f"{cell.abi}-ABI wheel must be tagged {cell.wheel_tag}, got {pairs}")
    if wheel_text is None:
        problems.append("the .dist-info has no WHEEL file")
    elif (in_file := parse_wheel_tags(wheel_text)) != {str(t) for t in wheel.tags}:
        in_name = sorted(str(t) for t in wheel.tags)
        problems.append(f"WHEEL file tags {sorted(in_file)} != filename tags {in_name}")
    abi = f" ({cell.abi} ABI)" if cell else ""
    return result(name, problems, ", ".join(pairs) + abi)


def check_identity(
    wheel: WheelName,
    dist_info: str | None,
    metadata_text: str | None,
    build_info: Mapping[str, Any] | None,
) -> CheckResult:
    """Project name and version agree in the filename, .dist-info, METADATA and BUILD_INFO."""
    name = "identity"
    problems = []
    version = wheel.version
    if dist_info is not None:
        stem = dist_info.removesuffix(".dist-info")
        project, _, raw = stem.partition("-")
        try:
            same = canonicalize_name(project) == PROJECT and Version(raw) == version
        except InvalidVersion:
            same = False
        if not same:
            problems.append(f"{dist_info} does not name {PROJECT} {version}")
    if metadata_text is None:
        problems.append("the .dist-info has no METADATA")
    else:
        meta = parse_metadata(metadata_text)
        if canonicalize_name(meta.get("Name", "")) != PROJECT:
            problems.append(f"METADATA Name is {meta.get('Name')!r}, not {PROJECT}")
        try:
            if (meta_version := Version(meta.get("Version", ""))) != version:
                problems.append(f"METADATA Version {meta_version} != filename version {version}")
        except InvalidVersion:
            problems.append(f"METADATA Version {meta.get('Version')!r} is not PEP 440")
    if build_info is not None:
        try:
            built = Version(str(build_info.get("version")))
        except InvalidVersion:
            problems.append(f"BUILD_INFO version {build_info.get('version')!r} is not PEP 440")
        else:
            # The PyPI wheel drops the local label from the name only: BUILD_INFO keeps it.
            pypi = version.local is None and built.public == version.public
            if built != version and not pypi:
                problems.append(f"BUILD_INFO version {built} != filename version {version}")
    return result(name, problems, f"{PROJECT} {version}")


def check_version(wheel: WheelName, cell: Cell | None) -> CheckResult:
    """The local label (+cu130, +cu130torch2.11, ...) is the cell's local_version."""
    name = "version"
    if cell is None:
        return CheckResult(name, FAIL, "no cell and no usable BUILD_INFO: nothing to check against")
    got = wheel.version.local
    # The PyPI wheel carries no local label (PyPI rejects them).
    pypi_wheel = got is None and cell.pypi_part
    if got != cell.local_version and not pypi_wheel:
        return CheckResult(name, FAIL, f"local version is +{got}, expected +{cell.local_version}")
    return CheckResult(name, PASS, f"{wheel.version}{' (the PyPI wheel)' if pypi_wheel else ''}")


def torch_requirement(metadata_text: str | None) -> SpecifierSet | None:
    """The specifier of the unconditional ``Requires-Dist: torch`` line, if any."""
    for line in parse_metadata(metadata_text or "").get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) == "torch" and req.marker is None:
            return req.specifier
    return None


def _admitted(spec: SpecifierSet, versions: Iterable[str]) -> set[str]:
    return {v for v in versions if spec.contains(v, prereleases=True)}


def check_requirements(metadata_text: str | None, cell: Cell | None) -> CheckResult:
    """``Requires-Dist: torch`` is the cell's; ``Requires-Python`` admits what the cell promises."""
    name = "requirements"
    if cell is None:
        return CheckResult(name, FAIL, "no cell and no usable BUILD_INFO: nothing to check against")
    problems = []
    torch_spec = torch_requirement(metadata_text)
    want = SpecifierSet(cell.torch_requirement)
    if not torch_spec:
        problems.append("no 'Requires-Dist: torch<spec>' pin: pip could pair it with any torch")
    elif torch_spec != want:
        problems.append(f"Requires-Dist torch{torch_spec}, expected torch{want}")
    elif not torch_spec.contains(cell.torch.public, prereleases=True):
        problems.append(f"torch{torch_spec} excludes the torch it was built against ({cell.torch})")
    requires_python = parse_metadata(metadata_text or "").get("Requires-Python")
    if not requires_python:
        problems.append("no Requires-Python")
    else:
        try:
            py_spec = SpecifierSet(requires_python)
        except InvalidSpecifier:
            return CheckResult(name, FAIL, f"invalid Requires-Python {requires_python!r}")
        promised = _admitted(SpecifierSet(cell.python_requirement), _PYTHON_SAMPLES)
        if missing := sorted(promised - _admitted(py_spec, _PYTHON_SAMPLES), key=Version):
            problems.append(f"Requires-Python {py_spec} excludes {missing} the cell promises")
        floor = "{}.{}".format(*STABLE_MIN_PYTHON)
        if cell.abi == "stable" and any(
            Version(v) < Version(floor) for v in _admitted(py_spec, _PYTHON_SAMPLES)
        ):
            problems.append(
                f"Requires-Python {py_spec} admits Pythons below the limited-API floor {floor}"
            )
    return result(name, problems, f"torch{torch_spec}; python{requires_python}")


def check_build_info(
    build_info: Mapping[str, Any] | None, error: str | None, cell: Cell | None
) -> CheckResult:
    """BUILD_INFO is complete, self-consistent and describes the cell."""
    name = "build-info"
    if error is not None:
        return CheckResult(name, FAIL, error)
    if build_info is None:
        return CheckResult(name, FAIL, "fusedops/_build_info.py with a BUILD_INFO dict is missing")
    problems = [f"missing key {k!r}" for k in BUILD_INFO_KEYS if k not in build_info]
    try:
        variant = Variant.parse(str(build_info.get("variant")))
    except ValueError as exc:
        variant = None
        problems.append(str(exc))
    cuda = build_info.get("cuda")
    if variant is not None and variant.cuda_version != cuda:
        problems.append(f"variant {build_info.get('variant')!r} does not match cuda {cuda!r}")
    archs: ArchList | None = None
    if raw_archs := build_info.get("arch_list"):
        try:
            archs = ArchList.parse(list(raw_archs))
        except (ArchListError, TypeError) as exc:
            problems.append(f"arch_list: {exc}")
    if bool(cuda) != bool(raw_archs):
        problems.append(
            f"cuda {cuda!r} with arch_list {raw_archs!r}: CUDA builds need archs, CPU none"
        )
    if cell is not None:
        got = {"abi": build_info.get("abi"), "variant": variant, "arch_list": archs}
        want = {"abi": cell.abi, "variant": cell.variant, "arch_list": cell.archs}
        problems += [
            f"{k} is {_show(got[k])}, cell says {_show(want[k])}" for k in want if got[k] != want[k]
        ]
        # Any patch release the cell's wheel serves will do (a cell built_with another one).
        try:
            torch = Version(str(build_info.get("torch")))
            if not SpecifierSet(cell.torch_requirement).contains(torch.public, prereleases=True):
                problems.append(
                    f"built against torch {torch}, outside the cell's torch{cell.torch_requirement}"
                )
        except InvalidVersion:
            problems.append(f"torch {build_info.get('torch')!r} is not PEP 440")
    summary = (
        f"torch {build_info.get('torch')}, cuda {cuda}, {build_info.get('abi')} ABI, "
        f"archs {archs or '-'}, git {short_commit(build_info.get('git_sha'))}"
    )
    return result(name, problems, summary)


def _show(value: object) -> str:
    return repr(str(value)) if value is not None else "None"


# --- the multi-variant PyPI wheel (pipeline/pypi_wheel.py) --------------------------------


def variant_parts(build_info: Mapping[str, Any] | None) -> dict[str, dict[str, Any]] | None:
    """BUILD_INFO['variants'] of a multi-variant wheel (family -> the part's BUILD_INFO)."""
    parts = (build_info or {}).get("variants")
    if not isinstance(parts, dict) or not parts:
        return None
    return {str(k): dict(v) if isinstance(v, dict) else {} for k, v in parts.items()}


def check_public_version(wheel: WheelName) -> CheckResult:
    """The multi-variant wheel goes to PyPI: a public version, no local label."""
    if wheel.version.local is not None:
        return CheckResult(
            "version",
            FAIL,
            f"a multi-variant wheel has a public version, not +{wheel.version.local}",
        )
    return CheckResult("version", PASS, f"{wheel.version} (multi-variant)")


def check_build_info_parts(
    build_info: Mapping[str, Any], parts: Mapping[str, Mapping[str, Any]]
) -> CheckResult:
    """The assembled BUILD_INFO, and each family's part: complete and self-consistent."""
    problems = [
        f"missing key {k!r}"
        for k in ("version", "abi", "torch", "git_sha", "variants")
        if k not in build_info
    ]
    if build_info.get("abi") != "stable":
        problems.append(f"abi is {build_info.get('abi')!r}: only stable parts are assembled")
    for family, part in sorted(parts.items()):
        res = check_build_info(part, None, None)
        if res.failed:
            problems.append(f"{family}: {res.message}")
        try:
            if Variant.parse(str(part.get("variant"))).family != family:
                problems.append(f"{family}: holds the {part.get('variant')} build")
        except ValueError:
            pass  # check_build_info reported it
        if part.get("version") != build_info.get("version"):
            problems.append(
                f"{family}: version {part.get('version')!r} != {build_info.get('version')!r}"
            )
    return result("build-info", problems, f"parts: {', '.join(sorted(parts))}")
