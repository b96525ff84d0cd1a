"""`python -m fusedops doctor`: does this fusedops build fit this machine?

The report is a plain dict (so `--json` and tests use the same data), built
without assuming the library loaded: a broken install is when it is needed.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

from . import _compat, _record
from ._version import __version__

ENV_VARS = (
    "CUDA_HOME",
    "CUDA_VISIBLE_DEVICES",
    "TORCH_CUDA_ARCH_LIST",
    "FUSEDOPS_INDEX_URL",
    "FUSEDOPS_VARIANT",
)


def _torch_report() -> dict[str, Any]:
    try:
        import torch
    except ImportError as err:
        return {"installed": False, "error": str(err)}
    report: dict[str, Any] = {
        "installed": True,
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_available": False,
        "gpus": [],
    }
    try:
        report["cuda_available"] = torch.cuda.is_available()
        for index in range(torch.cuda.device_count() if report["cuda_available"] else 0):
            major, minor = torch.cuda.get_device_capability(index)
            report["gpus"].append(
                {
                    "index": index,
                    "name": torch.cuda.get_device_name(index),
                    "capability": [major, minor],
                }
            )
    except RuntimeError as err:  # a broken driver: report it, don't crash the doctor
        report["cuda_error"] = str(err)
    return report


def _build_report() -> dict[str, Any]:
    try:
        from ._loader import read_build_info

        return read_build_info()
    except ImportError as err:
        return {"error": str(err)}


def _verify_report(version: str | None) -> dict[str, Any]:
    """Every installed file against the wheel's RECORD (`doctor --verify`)."""
    path = _record.find_record(version)
    if path is None:
        return {
            "record": None,
            "checked": 0,
            "problems": [
                f"no installed wheel's RECORD next to {_record.PACKAGE_DIR}: nothing to verify "
                "against (a source tree or an editable install?)"
            ],
        }
    try:
        checked, problems = _record.verify(_record.read_record(path))
    except _record.RecordError as err:
        checked, problems = 0, [str(err)]
    return {"record": str(path), "checked": checked, "problems": problems}


def collect(load_error: BaseException | None = None, verify: bool = False) -> dict[str, Any]:
    """Everything the doctor knows, and its verdict; `verify` adds the RECORD check."""
    torch_info = _torch_report()
    build = _build_report()

    def wheel_for_this_torch(version: object) -> str:
        """The pip command for this fusedops release built for the installed torch."""
        return _compat.pip_command(
            str(version).split("+")[0], torch_info["version"], torch_info["cuda"]
        )

    problems: list[str] = []
    advice: list[str] = []

    if not torch_info["installed"]:
        problems.append("torch is not installed")
        advice.append("pip install torch  (then reinstall the matching fusedops wheel)")
    if "error" in build:
        problems.append(build["error"])

    # The one PyPI wheel carries a library per family: report which one torch gets, and why.
    library: dict[str, Any] | None = None
    if "variants" in build and "error" not in build:
        library = {"available": sorted(build["variants"])}
        if torch_info["installed"]:
            try:
                chosen = _compat.select_library(
                    build, torch_info["cuda"], os.environ.get(_compat.VARIANT_ENV)
                )
            except _compat.SelectionError as err:
                problems.append(str(err))
                # No library here fits this torch: a per-variant wheel may (with
                # FUSEDOPS_VARIANT set, the error itself says to unset it).
                if not os.environ.get(_compat.VARIANT_ENV):
                    advice.append(wheel_for_this_torch(build["version"]))
                build = {"error": str(err)}
            else:
                library |= {"loaded": chosen.family, "why": chosen.why}
                build = chosen.info

    if torch_info["installed"] and "error" not in build:
        reason = _compat.torch_mismatch(build, torch_info["version"], torch_info["cuda"])
        if reason:
            problems.append(reason)
            advice.append(wheel_for_this_torch(build["version"]))
        for gpu in torch_info["gpus"]:
            verdict = _compat.arch_coverage(tuple(gpu["capability"]), build.get("arch_list", []))
            gpu["covered"] = verdict.covered
            gpu["how"] = verdict.how
            if build.get("cuda") and not verdict.covered:
                problems.append(f"cuda:{gpu['index']} ({gpu['name']}): {verdict.how}")
                advice.append(
                    "rebuild for it: TORCH_CUDA_ARCH_LIST="
                    f'"{gpu["capability"][0]}.{gpu["capability"][1]}" pip install --no-build-isolation '
                    "fusedops --no-binary fusedops"
                )
        if not build.get("cuda") and torch_info["cuda_available"]:
            advice.append(
                "this is a CPU-only fusedops build: CUDA tensors are not supported; for GPU "
                "kernels: " + wheel_for_this_torch(build["version"])
            )

    if load_error is not None and not problems:
        problems.append(f"the library failed to load: {load_error}")

    verified = None
    if verify:
        version = build.get("version") if "error" not in build else None
        verified = _verify_report(version)
        problems += [f"--verify: {p}" for p in verified["problems"]]
        if verified["problems"]:
            advice.append(_compat.reinstall_command(version or _installed_version(verified)))

    report: dict[str, Any] = {
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "platform": platform.platform(),
        "environment": {name: os.environ[name] for name in ENV_VARS if name in os.environ},
        "torch": torch_info,
        "fusedops": {"version": __version__, "build": build}
        | ({"library": library} if library is not None else {}),
        "problems": problems,
        "advice": advice,
        "verdict": "OK" if not problems else "PROBLEM",
    }
    if verified is not None:
        report["verify"] = verified
    return report


def _installed_version(verified: dict[str, Any]) -> str | None:
    if not verified["record"]:
        return None
    return _record.Record(Path(verified["record"]), {}).dist_version


def render(report: dict[str, Any]) -> str:
    """The report as aligned text for a terminal."""
    lines = ["fusedops doctor", ""]

    def row(key: str, value: object) -> None:
        lines.append(f"  {key:<22} {value}")

    lines.append("environment")
    row("python", f"{report['python']['version']} ({report['python']['executable']})")
    row("platform", report["platform"])
    for name, value in report["environment"].items():
        row(name, value)

    torch_info = report["torch"]
    lines += ["", "torch"]
    if torch_info["installed"]:
        row("version", torch_info["version"])
        row("CUDA", torch_info["cuda"] or "none (CPU-only build)")
        row("GPU available", torch_info["cuda_available"])
        if "cuda_error" in torch_info:
            row("CUDA error", torch_info["cuda_error"])
    else:
        row("installed", "no")

    build = report["fusedops"]["build"]
    lines += ["", "fusedops wheel"]
    if "error" in build:
        row("build info", build["error"])
    else:
        row("version", build["version"])
        row("ABI", build["abi"])
        row("built against torch", build["torch"])
        row("CUDA", build["cuda"] or "none (CPU-only)")
        row("archs", " ".join(build["arch_list"]) or "-")
        row("git sha", build.get("git_sha") or "unknown")
    library = report["fusedops"].get("library")
    if library is not None:
        row("libraries", " ".join(library["available"]))
        if library.get("loaded"):
            row("loaded", f"{library['loaded']} ({library['why']})")

    if torch_info.get("gpus"):
        lines += ["", "GPUs"]
        for gpu in torch_info["gpus"]:
            cap = f"{gpu['capability'][0]}.{gpu['capability'][1]}"
            status = ("covered: " if gpu.get("covered") else "NOT covered: ") + gpu.get("how", "?")
            row(f"cuda:{gpu['index']}", f"{gpu['name']} (sm {cap}) {status}")

    if "verify" in report:
        verified = report["verify"]
        lines += ["", "installed files (--verify)"]
        row("RECORD", verified["record"] or "not found")
        row("files checked", verified["checked"])
        row("result", "all match RECORD" if not verified["problems"] else "MISMATCH (see below)")

    lines += ["", f"verdict: {report['verdict']}"]
    lines += [f"  problem: {p}" for p in report["problems"]]
    lines += [f"  fix: {a}" for a in report["advice"]]
    return "\n".join(lines)
