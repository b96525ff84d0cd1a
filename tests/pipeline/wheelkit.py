"""Build tiny but real wheels for the pipeline tests (gcc-compiled .so, proper RECORD)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sysconfig
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest


def build_info_source(**overrides: object) -> bytes:
    info: dict[str, object] = {
        "version": "0.1.0+cpu",
        "torch": "2.14.1",
        "cuda": None,
        "abi": "stable",
        "arch_list": [],
        "git_sha": "0123456789abcdef0123456789abcdef01234567",
        "variant": "cpu",
    }
    info.update(overrides)
    return f"BUILD_INFO = {info!r}\n".encode()


# A fusedops package implemented in pure torch: what the smoke test imports.
PURE_TORCH_INIT = b"""
import torch
from fusedops._build_info import BUILD_INFO


def rms_norm(x, weight, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    res = x + residual
    return rms_norm(res, weight, eps), res


def silu_and_mul(x):
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]
"""

# Limited-API 3.10 extension module that also needs libc10/libtorch_cpu (like the real one).
LIMITED_EXT_C = r"""
#define Py_LIMITED_API 0x030A0000
#include <Python.h>
#include <stdlib.h>
int c10_probe(void);
int torch_probe(void);
/* getenv makes libc a real dependency, as in any real extension */
int fusedops_probe(void) { return c10_probe() + torch_probe() + (getenv("FUSEDOPS") != NULL); }
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
"""

# Uses a private CPython symbol that is not part of the limited API.
NONLIMITED_EXT_C = r"""
#include <Python.h>
#include <stdlib.h>
int c10_probe(void);
PyObject **fusedops_dict(PyObject *o) { c10_probe(); getenv("X"); return _PyObject_GetDictPtr(o); }
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
"""

# A "CPU" extension that wrongly links the CUDA runtime.
CUDART_EXT_C = LIMITED_EXT_C.replace(
    "torch_probe() + (getenv", "torch_probe() + cudart_probe() + (getenv"
).replace("int torch_probe(void);", "int torch_probe(void);\nint cudart_probe(void);")


def gcc(source: str, out: Path, args: Sequence[str] = ()) -> Path:
    """Compile ``source`` into a shared object with gcc."""
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text(source)
    include = sysconfig.get_paths()["include"]
    cmd = ["gcc", "-shared", "-fPIC", "-O1", f"-I{include}", str(src), "-o", str(out), *args]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def fake_torch_lib(root: Path) -> Path:
    """A torch/lib stand-in: libc10.so, libtorch_cpu.so and a libcudart.so.13."""
    lib = root / "torch" / "lib"
    gcc("int c10_probe(void) { return 1; }\n", lib / "libc10.so", ["-Wl,-soname,libc10.so"])
    gcc(
        "int torch_probe(void) { return 2; }\n",
        lib / "libtorch_cpu.so",
        ["-Wl,-soname,libtorch_cpu.so"],
    )
    gcc(
        "int cudart_probe(void) { return 3; }\n",
        lib / "libcudart.so.13",
        ["-Wl,-soname,libcudart.so.13"],
    )
    return lib


def link_args(torch_lib: Path, *libs: str) -> list[str]:
    """Link like a real (C++) extension: torch's libraries and the shared libstdc++,
    which the gate requires (a static C++ runtime is the `linked-libs` fault)."""
    args = [f"-L{torch_lib}"] + [f"-l:{lib}" for lib in libs]
    return [*args, "-Wl,--no-as-needed", "-lstdc++"]


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def write_wheel(
    out_dir: Path,
    version: str,
    tag: str = "cp310-abi3-linux_x86_64",
    files: Mapping[str, bytes] | None = None,
    *,
    requires: Sequence[str] = ("torch>=2.10",),
    requires_python: str | None = ">=3.10",
    wheel_tags: Sequence[str] | None = None,
    purelib: bool = False,
) -> Path:
    """Zip ``files`` into a proper wheel (WHEEL, METADATA, RECORD)."""
    dist_info = f"fusedops-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", "Name: fusedops", f"Version: {version}"]
    if requires_python:
        meta.append(f"Requires-Python: {requires_python}")
    meta += [f"Requires-Dist: {r}" for r in requires]
    tags = list(wheel_tags) if wheel_tags is not None else _expand(tag)
    wheel_text = [
        "Wheel-Version: 1.0",
        "Generator: wheelkit",
        f"Root-Is-Purelib: {str(purelib).lower()}",
    ]
    wheel_text += [f"Tag: {t}" for t in tags]
    members = dict(files or {})
    members[f"{dist_info}/METADATA"] = ("\n".join(meta) + "\n").encode()
    members[f"{dist_info}/WHEEL"] = ("\n".join(wheel_text) + "\n").encode()
    record = [f"{p},{record_hash(d)},{len(d)}" for p, d in members.items()]
    record.append(f"{dist_info}/RECORD,,")
    members[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"fusedops-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            zf.writestr(info, data, zipfile.ZIP_DEFLATED)
    return path


def _expand(tag: str) -> list[str]:
    py, abi, plats = tag.split("-")
    return [f"{p}-{abi}-{plat}" for p in py.split(".") for plat in plats.split(".")]


def package_files(
    so: Path | None, build_info: bytes, init: bytes = PURE_TORCH_INIT
) -> dict[str, bytes]:
    files = {"fusedops/__init__.py": init, "fusedops/_build_info.py": build_info}
    if so is not None:
        files[f"fusedops/{so.name}"] = so.read_bytes()
    return files


def rewrite_wheel(
    src: Path,
    dest: Path,
    *,
    replace: Mapping[str, bytes] | None = None,
    add: Sequence[tuple[str, bytes]] = (),
    drop: Sequence[str] = (),
    update_record: bool = False,
) -> Path:
    """Copy a wheel with members replaced, added (duplicates allowed) or dropped.

    With ``update_record`` RECORD is rewritten to match (a consistent wheel with
    different content); without it RECORD is kept as it was (a tampered wheel).
    """
    replace = dict(replace or {})
    with zipfile.ZipFile(src) as zf:
        # Directory entries are dropped: RECORD lists files only.
        members = [
            (i, zf.read(i)) for i in zf.infolist() if i.filename not in drop and not i.is_dir()
        ]
    out = [(i.filename, replace.get(i.filename, data), i.external_attr) for i, data in members]
    out += [(name, data, (0o755 if ".so" in name else 0o644) << 16) for name, data in add]
    if update_record:
        (record,) = [n for n, _, _ in out if n.endswith(".dist-info/RECORD")]
        lines = [f"{n},{record_hash(d)},{len(d)}" for n, d, _ in out if n != record]
        body = ("\n".join([*lines, f"{record},,"]) + "\n").encode()
        out = [(n, body if n == record else d, a) for n, d, a in out]
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, attr in out:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = attr
            with warnings.catch_warnings():  # a duplicate name is the point of some faults
                warnings.simplefilter("ignore", UserWarning)
                zf.writestr(info, data, zipfile.ZIP_DEFLATED)
    return dest


def readelf_needed(so: Path) -> list[str]:
    """DT_NEEDED as binutils' readelf reads it: the reference pipeline.elf is tested against."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    # LC_ALL=C: readelf translates "Shared library:", which the pattern matches.
    proc = subprocess.run(
        ["readelf", "-d", str(so)],
        capture_output=True,
        text=True,
        check=True,
        env={"LC_ALL": "C", "PATH": os.environ.get("PATH", "")},
    )
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", proc.stdout)


# Versions that meet pipeline.toolchain.python_env.BUILD_DEPS.
BUILD_TOOLS = {"pip": "25.0", "setuptools": "80.9.0", "wheel": "0.45.1", "ninja": "1.11.1", "packaging": "25.0"}  # fmt: skip


def build_python_stand_in(
    path: Path, torch: str, python: str = "3.11", **tools: str | None
) -> Path:
    """A stand-in for `--torch-python`: answers the build-tools probe with `python` and
    BUILD_TOOLS (overridden by `tools`), and the torch probe by running the shell
    command `torch`."""
    answer = json.dumps({"python": python, "tools": {**BUILD_TOOLS, **tools}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        'case "$2" in\n'
        f"  *md.version*) echo '{answer}' ;;\n"
        f"  *torch*) {torch} ;;\n"
        "esac\n"
    )
    path.chmod(0o755)
    return path
