"""Installs into fresh virtual environments from generated indexes: the README's commands, run.

The installs under test see only file:// indexes (pip with no configuration, uv
offline); the stand-ins' files are gathered once per session through this
machine's own pip configuration. What stands in for what:

- PyTorch's index https://download.pytorch.org/whl/<variant> (every variant): the
  ``torch_index`` fixture, a PEP 503 index generated here over torch 2.13.0+cpu and
  its dependencies (``pip download``). torch's CUDA builds pull gigabytes of nvidia
  wheels (and cuda-bindings, which this machine does not mirror), and which index
  serves which name, the thing under test, does not depend on the variant.
- The same index offering a newer torch (an installed torch must be kept): the
  ``newer_torch_index`` fixture, linking the torch 2.14.1 (cu130) wheel where it lies
  on this machine's disk.
- Our Pages index https://fusedops.github.io/fusedops: the ``ours`` fixture, what
  ``pipeline index`` writes for the CPU wheel built from this checkout
  (FUSEDOPS_STABLE_WHEEL, or built here once) and relabelled copies
  0.1.0+cu130/+cu132/+cu128/+cu126 (the same CPU library, so every README row has
  an index whose wheel runs here).
- GitHub's release download URL .../releases/download/<tag>/<file>: the file://
  directory ``releases/<tag>/`` (the ``release_pages`` fixture).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import wheelkit as wk
from packaging.utils import canonicalize_name, parse_wheel_filename

from pipeline import index as mi
from pipeline import matrix

REPO = Path(__file__).resolve().parents[2]
PUBLIC_ROOT = "https://fusedops.github.io/fusedops"
TORCH_PREFIX = "https://download.pytorch.org/whl/"
CPU_TORCH = "2.13.0+cpu"  # the torch of TORCH_INDEX
NEWER_TORCH = "2.14.1"  # the torch of NEWER_TORCH_INDEX (cu130, on this machine's disk)
VARIANTS = ("cu130", "cu132", "cu128", "cu126", "cpu")

pytestmark = pytest.mark.slow

# Run inside a venv: every op on CPU against torch's own result; prints the versions.
SMOKE = """
import importlib.metadata as md, json, torch, fusedops
F = torch.nn.functional
x, r, w, g = torch.randn(4, 64), torch.randn(4, 64), torch.randn(64), torch.randn(4, 128)
assert torch.allclose(fusedops.rms_norm(x, w), F.rms_norm(x, (64,), w, 1e-6), atol=1e-5)
out, res = fusedops.fused_add_rms_norm(x, r, w)
assert torch.equal(res, x + r)
assert torch.allclose(out, F.rms_norm(x + r, (64,), w, 1e-6), atol=1e-5)
assert torch.allclose(fusedops.silu_and_mul(g), F.silu(g[:, :64]) * g[:, 64:], atol=1e-6)
print(json.dumps({"torch": md.version("torch"), "fusedops": md.version("fusedops")}))
"""


# --- environment ----------------------------------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    """No pip/uv settings from this machine: only the indexes a command names are used."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV", "PYTHONPATH", "CONDA"))
    }
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        UV_NO_CONFIG="1",
        UV_OFFLINE="1",  # file:// indexes only: uv must not need the network
        UV_PYTHON_DOWNLOADS="never",
    )
    env.update(extra)
    return env


def run(
    argv: Sequence[str | Path], *, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, (
        f"{shlex.join(proc.args)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def python311() -> str:
    # The torch wheels on this machine are cp311.
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if found is None:
        pytest.skip("needs Python 3.11 (the torch wheels used here are cp311)")
    return found


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This module's working directory, removed after its last test: it holds a uv
    cache and torch's wheels (~1 GB) that would otherwise stay on disk while the
    later tests make venvs of their own (CI machines run short of disk)."""
    path = tmp_path_factory.mktemp("install")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def uv(work: Path) -> Path:
    """uv: next to this interpreter, on PATH, or `pip install uv` into this module's directory."""
    here = Path(sys.executable).parent / "uv"
    if here.is_file():
        return here
    if found := shutil.which("uv"):
        return Path(found)
    target = work / "uv-tool"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--target", target, "uv"]
    proc = run(cmd, cwd=work, env=dict(os.environ))  # this machine's own pip configuration
    if proc.returncode != 0:
        pytest.skip(f"uv is not installed and `pip install uv` failed: {proc.stderr[-500:]}")
    return target / "bin" / "uv"


@pytest.fixture(scope="module")
def uv_env(work: Path) -> Callable[[Path], dict[str, str]]:
    cache = work / "uv-cache"  # shared: uv links installed files from it, so repeats are fast

    def env(venv: Path) -> dict[str, str]:
        return clean_env(UV_CACHE_DIR=str(cache), VIRTUAL_ENV=str(venv))

    return env


@pytest.fixture(autouse=True)
def _drop_venvs(tmp_path: Path) -> Iterator[None]:
    """Each venv holds a torch (~1 GB): removed after its test, pytest keeps the rest."""
    yield
    for cfg in list(tmp_path.rglob("pyvenv.cfg")):
        shutil.rmtree(cfg.parent, ignore_errors=True)


def new_venv(path: Path) -> Path:
    ok(run([python311(), "-m", "venv", path], cwd=path.parent))
    return path


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def smoke(venv: Path) -> dict[str, str]:
    """Import fusedops in the venv, run every op, return the installed versions."""
    proc = ok(run([venv_python(venv), "-c", SMOKE], cwd=venv.parent))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def torch_files(venv: Path) -> dict[str, tuple[int, int, int]]:
    """Every file of the installed torch, with inode, mtime and size: a reinstall changes them."""
    (site,) = (venv / "lib").glob("python3.*/site-packages")
    out = {}
    for top in [site / "torch", *site.glob("torch-*.dist-info")]:
        for f in top.rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                st = f.stat()
                out[str(f.relative_to(site))] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


# --- stand-in indexes -------------------------------------------------------------------------


def write_simple_index(links: dict[str, list[tuple[str, str, str]]], out: Path) -> Path:
    """A PEP 503 index of other projects' files: project -> [(file name, URL, sha256)]."""
    for project, files in links.items():
        anchors = "".join(
            f'<a href="{html.escape(url)}#sha256={digest}">{html.escape(name)}</a><br>\n'
            for name, url, digest in files
        )
        (out / project).mkdir(parents=True, exist_ok=True)
        (out / project / "index.html").write_text(
            f"<!DOCTYPE html>\n<html><body>\n{anchors}</body></html>\n"
        )
    root = "".join(f'<a href="{p}/">{p}</a><br>\n' for p in sorted(links))
    (out / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{root}</body></html>\n")
    return out


def index_of_files(files: Sequence[Path], out: Path) -> Path:
    links: dict[str, list[tuple[str, str, str]]] = {}
    for f in files:
        project = canonicalize_name(parse_wheel_filename(f.name)[0])
        links.setdefault(project, []).append((f.name, f.as_uri(), mi.sha256_file(f)))
    return write_simple_index(links, out)


@pytest.fixture(scope="module")
def torch_index(work: Path) -> Path:
    """Stands in for https://download.pytorch.org/whl/<variant>: torch 2.13.0+cpu and its deps."""
    files = work / "torch-files"
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", f"torch=={CPU_TORCH}", "-d", files]
    cmd += [
        "--only-binary",
        ":all:",
        "--python-version",
        "3.11",
        "--platform",
        "manylinux_2_28_x86_64",
    ]
    proc = run(cmd, cwd=work, env=dict(os.environ))  # this machine's own pip configuration
    if proc.returncode != 0:
        pytest.skip(f"torch {CPU_TORCH} and its dependencies are not at hand: {proc.stderr[-500:]}")
    return index_of_files(sorted(files.glob("*.whl")), work / "torch-index")


@pytest.fixture(scope="module")
def newer_torch_index(work: Path) -> Path:
    """An index offering torch 2.14.1 (cu130), linked where it lies on this machine's disk."""
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps"]
    cmd += ["--ignore-installed", "--report", "-", f"torch=={NEWER_TORCH}"]
    proc = run(cmd, cwd=work, env=dict(os.environ))
    found = json.loads(proc.stdout)["install"] if proc.returncode == 0 else []
    info = found[0]["download_info"] if found else {}
    if not str(info.get("url", "")).startswith("file://"):
        pytest.skip(f"no torch {NEWER_TORCH} wheel on this machine's disk: {proc.stderr[-500:]}")
    url, digest = info["url"], info["archive_info"]["hashes"]["sha256"]
    return write_simple_index({"torch": [(url.rsplit("/", 1)[1], url, digest)]}, work / "newer")


def build_cpu_wheel(out: Path) -> Path:
    """The stable CPU wheel of this checkout, built from a copy (the checkout stays clean)."""
    src = out / "src"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for rel in listed:
        if (REPO / rel).is_file() and not rel.startswith(("tests/", "docs/", "benchmarks/")):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps"]
    env = {**os.environ, "FUSEDOPS_CUDA": "0", "FUSEDOPS_ABI": "stable"}
    env.pop("FUSEDOPS_CELL", None)
    proc = run([*cmd, "-w", out / "wheel", "."], cwd=src, env=env)
    assert proc.returncode == 0, (
        f"building the CPU wheel failed:\n{proc.stdout[-3000:]}{proc.stderr}"
    )
    (wheel,) = (out / "wheel").glob("fusedops-*.whl")
    return wheel


@pytest.fixture(scope="module")
def cpu_wheel(work: Path) -> Path:
    """FUSEDOPS_STABLE_WHEEL (nox -s tests builds it) or the same wheel built here."""
    if path := os.environ.get("FUSEDOPS_STABLE_WHEEL"):
        return Path(path)
    try:
        import torch  # noqa: F401  (the build needs it, as `pip wheel --no-build-isolation` does)
    except ImportError:
        pytest.skip("FUSEDOPS_STABLE_WHEEL is unset and this interpreter has no torch to build it")
    return build_cpu_wheel(work / "build")


def relabel(src: Path, dest_dir: Path, new: str) -> Path:
    """A copy of a fusedops wheel as version ``new``: dist-info, METADATA, RECORD, _version.py."""
    old = parse_wheel_filename(src.name)[1]
    with zipfile.ZipFile(src) as zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        members = [(i.filename, zf.read(i)) for i in infos]
    stamped = ("fusedops/_version.py", "fusedops/_build_info.py")
    members = [
        (p, d.replace(f"'{old}'".encode(), f"'{new}'".encode()) if p in stamped else d)
        for p, d in members
    ]
    old_di, new_di = f"fusedops-{old}.dist-info/", f"fusedops-{new}.dist-info/"
    members = [(new_di + p[len(old_di) :] if p.startswith(old_di) else p, d) for p, d in members]
    members = [
        (p, d.replace(f"Version: {old}\n".encode(), f"Version: {new}\n".encode()))
        if p == new_di + "METADATA"
        else (p, d)
        for p, d in members
        if p != new_di + "RECORD"
    ]
    record = [f"{p},{wk.record_hash(d)},{len(d)}" for p, d in members]
    members.append((new_di + "RECORD", ("\n".join([*record, f"{new_di}RECORD,,"]) + "\n").encode()))
    attrs = {i.filename: i.external_attr for i in infos}
    dest = dest_dir / src.name.replace(f"-{old}-", f"-{new}-")
    dest_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in members:
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = attrs.get(path, 0o644 << 16)  # the .so keeps its exec bits
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return dest


@pytest.fixture(scope="module")
def wheelhouse(cpu_wheel: Path, work: Path) -> Path:
    d = work / "wheelhouse"
    d.mkdir()
    shutil.copy2(cpu_wheel, d)
    for variant in VARIANTS[:-1]:
        relabel(cpu_wheel, d, f"0.1.0+{variant}")
    return d


@pytest.fixture(scope="module")
def ours(wheelhouse: Path, work: Path) -> Path:
    """Stands in for https://fusedops.github.io/fusedops: the index tree pipeline index writes."""
    out = work / "pages"
    assert mi.main([str(wheelhouse), str(out)]) == 0
    return out


def substitute(command: str, torch_uri: str, ours_uri: str) -> list[str]:
    """The command's words with the public index URLs replaced by the stand-ins."""
    words = shlex.split(command)
    for i, word in enumerate(words):
        if word.startswith(TORCH_PREFIX):
            words[i] = torch_uri
        elif word.startswith(PUBLIC_ROOT + "/"):
            words[i] = f"{ours_uri}/{word.removeprefix(PUBLIC_ROOT + '/')}"
    return words


def run_command(
    command: str,
    venv: Path,
    *,
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    extra: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run a documented `pip install ...` / `uv pip install ...` command for ``venv``."""
    words = [*substitute(command, torch_index.as_uri(), ours.as_uri()), *extra]
    if words[:2] == ["pip", "install"]:
        return run([venv_python(venv), "-m", *words], cwd=venv.parent)
    assert words[:3] == ["uv", "pip", "install"], command
    return run([uv, *words[1:]], cwd=venv.parent, env=uv_env(venv))  # VIRTUAL_ENV: the target


# --- the README -------------------------------------------------------------------------------


def install_section() -> str:
    text = (REPO / "README.md").read_text()
    match = re.search(r"^## Install \(users\)\n(.*?)^## ", text, re.S | re.M)
    assert match, "README.md has no '## Install (users)' section"
    return match.group(1)


def readme_commands() -> dict[tuple[str, str], str]:
    """(installer, variant) -> the command in the section's table."""
    found: dict[tuple[str, str], str] = {}
    for line in install_section().splitlines():
        if not line.startswith("|"):
            continue
        for cmd in re.findall(r"`((?:uv )?pip install [^`]+)`", line):
            installer = "uv" if cmd.startswith("uv ") else "pip"
            variant = cmd.rsplit("/", 1)[1]
            assert (installer, variant) not in found, f"two {installer} rows for {variant}"
            found[installer, variant] = cmd
    return found


def readme_uv_project() -> str:
    match = re.search(r"```toml\n(.*?)```", install_section(), re.S)
    assert match, "the install section has no [tool.uv] project snippet"
    return match.group(1)


def test_readme_table_is_the_documented_commands() -> None:
    # One row per stable variant of the matrix, pip and uv side by side, each the
    # command pipeline.index renders (the index's landing page shows the same).
    commands = readme_commands()
    variants = {str(c.variant) for c in matrix.expand() if c.abi == "stable"}
    assert set(VARIANTS) == variants
    assert set(commands) == {(i, v) for i in mi.INSTALLERS for v in variants}
    for (installer, variant), command in commands.items():
        assert command == mi.install_command(installer, variant, PUBLIC_ROOT)


# uv runs every row; pip the first row only. pip's command differs from row to row
# only in the index URLs, which the uv runs check against the same index tree, and a pip
# install of torch takes a minute on a 2-core CI machine (uv links from its cache). pip's
# own behaviour is covered again by the installed-torch, index-priority and hash tests.
README_RUNS = [("uv", v) for v in VARIANTS] + [("pip", VARIANTS[0])]


@pytest.mark.parametrize(("installer", "variant"), README_RUNS)
def test_readme_command_installs_torch_and_fusedops(
    installer: str,
    variant: str,
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    # A fresh venv with nothing in it: the one command brings torch and fusedops.
    venv = new_venv(tmp_path / "venv")
    command = readme_commands()[installer, variant]
    ok(run_command(command, venv, torch_index=torch_index, ours=ours, uv=uv, uv_env=uv_env))
    assert smoke(venv) == {"torch": CPU_TORCH, "fusedops": f"0.1.0+{variant}"}


def test_index_priority_uv_first_index_and_pip_merge(
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    # Why the same flags are safe for uv, and what pip relies on: a decoy fusedops
    # 9.9.9 on the torch index. uv (first-index) asks --extra-index-url first and
    # takes ours; pip merges both indexes and would take the decoy, so pip's safety
    # is that PyTorch's index hosts no fusedops (it hosts torch and its dependencies).
    decoy_index = tmp_path / "torch-index-with-decoy"
    shutil.copytree(torch_index, decoy_index)
    decoy = wk.write_wheel(tmp_path / "decoy", "9.9.9", "py3-none-any", {"fusedops/x.py": b""})
    digest = mi.sha256_file(decoy)
    write_simple_index({"fusedops": [(decoy.name, decoy.as_uri(), digest)]}, decoy_index)
    venv = new_venv(tmp_path / "venv")
    plans = {
        installer: ok(
            run_command(
                readme_commands()[installer, "cpu"],
                venv,
                torch_index=decoy_index,
                ours=ours,
                uv=uv,
                uv_env=uv_env,
                extra=["--dry-run"],
            )
        )
        for installer in mi.INSTALLERS
    }
    assert "+ fusedops==0.1.0+cpu" in plans["uv"].stderr
    assert "fusedops-9.9.9" in plans["pip"].stdout


@pytest.mark.parametrize("installer", mi.INSTALLERS)
def test_installed_torch_is_never_replaced(
    installer: str,
    newer_torch_index: Path,
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    # torch 2.13.0+cpu is installed; the cu130 row's torch index offers torch 2.14.1
    # (cu130). The command adds fusedops and leaves torch as it was, file for file.
    venv = new_venv(tmp_path / "venv")
    cmd = [uv, "pip", "install", f"torch=={CPU_TORCH}", "--index-url", torch_index.as_uri()]
    ok(run(cmd, cwd=tmp_path, env=uv_env(venv)))
    before = torch_files(venv)
    command = readme_commands()[installer, "cu130"]
    proc = run_command(
        command, venv, torch_index=newer_torch_index, ours=ours, uv=uv, uv_env=uv_env
    )
    ok(proc)
    assert torch_files(venv) == before
    assert smoke(venv) == {"torch": CPU_TORCH, "fusedops": "0.1.0+cu130"}


def test_uv_project_snippet(
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    # The README's [tool.uv] project, URLs replaced by the stand-ins; PyPI (where
    # torch's own dependencies come from) is replaced by TORCH_INDEX too.
    project = tmp_path / "myproject"
    project.mkdir()
    text = readme_uv_project()
    text = re.sub(rf'"{re.escape(TORCH_PREFIX)}[a-z0-9]+"', f'"{torch_index.as_uri()}"', text)
    text = text.replace(f'"{PUBLIC_ROOT}/', f'"{ours.as_uri()}/')
    assert "https://" not in text
    (project / "pyproject.toml").write_text(text)
    env = uv_env(project / ".venv")
    env.pop("UV_NO_CONFIG")  # the project's own [tool.uv] is the thing under test
    env.pop("VIRTUAL_ENV")
    env["UV_DEFAULT_INDEX"] = torch_index.as_uri()
    ok(run([uv, "sync", "--python", python311()], cwd=project, env=env))
    assert smoke(project / ".venv") == {"torch": CPU_TORCH, "fusedops": "0.1.0+cu130"}
    lock = (project / "uv.lock").read_text()
    assert f'source = {{ registry = "{ours / "cu130"}" }}' in lock


# --- hash-checked installs ----------------------------------------------------------------


@pytest.fixture(scope="module")
def hashed_requirements(
    torch_index: Path, ours: Path, uv: Path, uv_env: Callable[[Path], dict[str, str]], work: Path
) -> Path:
    """`uv pip compile --generate-hashes` with the cpu row's two indexes."""
    (work / "requirements.in").write_text("fusedops\n")
    flags = substitute(readme_commands()["uv", "cpu"], torch_index.as_uri(), ours.as_uri())[4:]
    cmd = [uv, "pip", "compile", "requirements.in", "--generate-hashes", *flags]
    cmd += ["--python-version", "3.11", "-o", "requirements.txt"]
    env = uv_env(work)
    env.pop("VIRTUAL_ENV")  # compiling needs no environment
    ok(run(cmd, cwd=work, env=env))
    return work / "requirements.txt"


@pytest.mark.parametrize("installer", mi.INSTALLERS)
def test_hash_checked_install(
    installer: str,
    hashed_requirements: Path,
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    text = hashed_requirements.read_text()
    pins = dict(re.findall(r"(?m)^([a-z0-9-]+)==(\S+)", text))
    assert pins["fusedops"] == "0.1.0+cpu" and pins["torch"] == CPU_TORCH
    assert text.count("--hash=sha256:") >= len(pins)  # every pinned file is hashed
    venv = new_venv(tmp_path / "venv")
    flags = ["--index-url", torch_index.as_uri(), "--extra-index-url", (ours / "cpu").as_uri()]
    args = ["install", "--require-hashes", "-r", hashed_requirements, *flags]
    if installer == "pip":
        ok(run([venv_python(venv), "-m", "pip", *args], cwd=tmp_path))
    else:
        ok(run([uv, "pip", *args], cwd=tmp_path, env=uv_env(venv)))
    assert smoke(venv) == {"torch": CPU_TORCH, "fusedops": "0.1.0+cpu"}


def test_hash_checked_install_refuses_a_tampered_wheel(
    hashed_requirements: Path,
    torch_index: Path,
    wheelhouse: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    # The wheel is changed and the index rebuilt around it, so the index's own
    # sha256 fragment matches the changed file: only the requirements' hash catches it.
    tampered_dir = tmp_path / "wheelhouse"
    tampered_dir.mkdir()
    (wheel,) = wheelhouse.glob("fusedops-0.1.0+cpu-*.whl")
    tampered = tampered_dir / wheel.name
    with zipfile.ZipFile(wheel) as zf, zipfile.ZipFile(tampered, "w", zipfile.ZIP_DEFLATED) as out:
        for info in zf.infolist():
            data = zf.read(info)
            if info.filename == "fusedops/__init__.py":
                data += b"\nprint('tampered')\n"
            out.writestr(info, data)
    pages = tmp_path / "pages"
    assert mi.main([str(tampered_dir), str(pages)]) == 0
    flags = ["--index-url", torch_index.as_uri(), "--extra-index-url", (pages / "cpu").as_uri()]
    venv = new_venv(tmp_path / "venv")
    cmd = [venv_python(venv), "-m", "pip", "install", "--require-hashes", "-r", hashed_requirements]
    proc = run([*cmd, *flags], cwd=tmp_path)
    assert proc.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE" in proc.stderr
    assert "fusedops" in proc.stderr.split("DO NOT MATCH")[1]
    cmd = [uv, "pip", "install", "--require-hashes", "-r", hashed_requirements, *flags]
    proc = run(cmd, cwd=tmp_path, env=uv_env(venv))
    assert proc.returncode != 0 and "Hash mismatch for `fusedops==0.1.0+cpu`" in proc.stderr
    assert not list((venv / "lib").glob("python3.*/site-packages/fusedops"))


# --- PEP 658 --------------------------------------------------------------------------------


def test_served_metadata_matches_anchor_and_wheel(ours: Path) -> None:
    for variant in VARIANTS:
        project = ours / variant / "fusedops"
        page = (project / "index.html").read_text()
        anchors = re.findall(r'<a href="([^"#]+)#sha256=[0-9a-f]{64}"([^>]*)>', page)
        assert anchors, variant
        for href, attrs in anchors:
            wheel = project / html.unescape(href).replace("%2B", "+")
            served = (project / (wheel.name + ".metadata")).read_bytes()
            with zipfile.ZipFile(wheel) as zf:
                (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
                metadata = zf.read(name)
            assert served == metadata
            digest = hashlib.sha256(served).hexdigest()
            assert f'data-dist-info-metadata="sha256={digest}"' in attrs
            assert f'data-core-metadata="sha256={digest}"' in attrs


# --- every release stays installable --------------------------------------------------------


@pytest.fixture(scope="module")
def release_pages(cpu_wheel: Path, work: Path) -> Path:
    """Two releases as the release workflow leaves them (wheels + metadata files per tag),
    indexed with the CLI pages-build runs; file://releases stands in for GitHub's URL."""
    releases = work / "releases"
    for version in ("0.1.0", "0.0.9"):
        for variant in ("cpu", "cu130"):
            relabel(cpu_wheel, releases / f"v{version}", f"{version}+{variant}")
        mi.write_metadata_files(releases / f"v{version}")
    out = work / "release-pages"
    args = ["--releases-url", releases.as_uri()]
    for version in ("0.1.0", "0.0.9"):
        args += ["--release", f"v{version}={releases / f'v{version}'}"]
    assert mi.main([*args, str(out)]) == 0
    return out


@pytest.mark.parametrize(("pin", "want"), [("fusedops==0.0.9", "0.0.9"), ("fusedops", "0.1.0")])
def test_older_release_stays_installable(
    pin: str,
    want: str,
    release_pages: Path,
    torch_index: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    # torch first (the user's), then the command: --index-url .../cu130 alone.
    venv = new_venv(tmp_path / "venv")
    cmd = [uv, "pip", "install", f"torch=={CPU_TORCH}", "--index-url", torch_index.as_uri()]
    ok(run(cmd, cwd=tmp_path, env=uv_env(venv)))
    index = (release_pages / "cu130").as_uri()
    ok(run([venv_python(venv), "-m", "pip", "install", pin, "--index-url", index], cwd=tmp_path))
    assert smoke(venv) == {"torch": CPU_TORCH, "fusedops": f"{want}+cu130"}


def test_older_release_from_scratch_with_uv(
    release_pages: Path,
    torch_index: Path,
    ours: Path,
    uv: Path,
    uv_env: Callable[[Path], dict[str, str]],
    tmp_path: Path,
) -> None:
    venv = new_venv(tmp_path / "venv")
    command = readme_commands()["uv", "cu130"].replace("fusedops ", "fusedops==0.0.9 ", 1)
    ok(
        run_command(
            command, venv, torch_index=torch_index, ours=release_pages, uv=uv, uv_env=uv_env
        )
    )
    assert smoke(venv) == {"torch": CPU_TORCH, "fusedops": "0.0.9+cu130"}
