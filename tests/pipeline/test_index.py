"""pipeline.index: routing and rendering (pure), and real pip installs from the indexes."""

from __future__ import annotations

import hashlib
import html
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import wheelkit as wk
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pipeline import index as mi
from pipeline import matrix
from pipeline.rules import Variant

PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
SHA = "a" * 64
MINORS = ("2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15")
CU130 = Variant.parse("cu130")
URL = "https://github.com/fusedops/fusedops/releases/download"


def entry(filename: str, torch: str | None = None, python: str | None = ">=3.10") -> mi.WheelEntry:
    meta = f"Metadata-Version: 2.1\nName: fusedops\nVersion: 0\nRequires-Python: {python}\n"
    if torch:
        meta += f"Requires-Dist: torch{torch}\n"
    return mi.make_entry(filename, SHA, meta)


STABLE_CU130 = "fusedops-0.1.0+cu130-cp310-abi3-manylinux_2_28_x86_64.whl"
CLASSIC_CU130 = "fusedops-0.1.0+cu130torch2.11-cp312-cp312-manylinux_2_28_x86_64.whl"
STABLE_CPU = "fusedops-0.1.0+cpu-cp310-abi3-manylinux_2_28_x86_64.whl"
CLASSIC_CPU = "fusedops-0.1.0+cputorch2.9-cp312-cp312-manylinux_2_28_x86_64.whl"


# --- PEP 440: the claims the index design rests on -----------------------------------


def test_local_version_beats_pypi_version() -> None:
    # Our +cu130 wheel wins over the same-version PyPI wheel (as torch's indexes rely on).
    assert Version("0.1.0+cu130") > Version("0.1.0")
    assert Version("0.1.0+cpu") > Version("0.1.0")
    assert Version("0.1.0+cu130") in SpecifierSet("==0.1.0")  # pins on 0.1.0 still match
    assert Version("0.1.1") > Version("0.1.0+cu130")  # a newer release still wins


def test_torch_pinned_local_versions_outrank_stable() -> None:
    # Why a variant index lists only stable wheels: classic ones would always win,
    # and the newest torch pin first.
    assert Version("0.1.0+cu130torch2.11") > Version("0.1.0+cu130")
    assert Version("0.1.0+cu130torch2.14") > Version("0.1.0+cu130torch2.11")
    assert Version("0.1.0+cu130torch2.9") > Version("0.1.0+cu130")


# --- pure logic ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "variant", "abi"),
    [
        (STABLE_CU130, "cu130", "stable"),
        (CLASSIC_CU130, "cu130", "classic"),
        ("fusedops-0.1.0+cu126torch2.9-cp312-cp312-manylinux_2_28_x86_64.whl", "cu126", "classic"),
        (STABLE_CPU, "cpu", "stable"),
        (CLASSIC_CPU, "cpu", "classic"),
        ("fusedops-0.1.0+cu133-cp310-abi3-manylinux_2_28_x86_64.whl", "cu133", "stable"),
    ],
)
def test_route(filename: str, variant: str, abi: str) -> None:
    version, got, got_abi = mi.route(filename)
    assert (str(got), got_abi, str(version)) == (variant, abi, filename.split("-")[1])


def test_route_agrees_with_every_matrix_cell() -> None:
    # The one rule: the index files each cell's wheel under the cell's own index_dir.
    for cell in matrix.expand(include_optional=True):
        filename = cell.wheel_filename("manylinux_2_28_x86_64", base="0.1.0")
        _, variant, abi = mi.route(filename)
        assert (str(variant), abi) == (cell.index_dir, cell.abi), filename


@pytest.mark.parametrize(
    ("filename", "message"),
    [
        ("fusedops.whl", "not a wheel filename"),
        ("other-0.1.0+cu130-py3-none-any.whl", "a wheel of 'other', not fusedops"),
        ("fusedops-0.1.0-cp310-abi3-linux_x86_64.whl", "no local version"),
        (
            "fusedops-0.1.0+cuda13-cp310-abi3-linux_x86_64.whl",
            r"local version \+cuda13 names no variant",
        ),
        ("fusedops-0.1.0+torch2.11-cp312-cp312-linux_x86_64.whl", "names no variant"),
        ("fusedops-0.1.0+rocm6.4-cp310-abi3-linux_x86_64.whl", "names no variant"),
        ("fusedops-0.1.0+cpux-cp310-abi3-linux_x86_64.whl", "names no variant"),
        ("fusedops-0.1.0+13.0-cp310-abi3-linux_x86_64.whl", r"\+13.0 names no variant"),
        ("fusedops-0.1.0+cu130torch2.09-cp312-cp312-linux_x86_64.whl", "is not the canonical"),
        ("fusedops-0.1.0+CU130-cp310-abi3-linux_x86_64.whl", "differs only by case"),
        ("fusedops-0.1.0+cu130-CP310-abi3-linux_x86_64.whl", "lower-case canonical names"),
        (
            "fusedops-0.1.0+cu130torch2.11-cp310-abi3-linux_x86_64.whl",
            "a classic-ABI local version",
        ),
        ("fusedops-0.1.0+cu130-cp312-cp312-linux_x86_64.whl", "a stable-ABI local version"),
    ],
)
def test_route_refuses(filename: str, message: str) -> None:
    with pytest.raises(mi.IndexBuildError, match=message):
        mi.route(filename)


def test_make_entry() -> None:
    e = entry(CLASSIC_CU130, "==2.11.*", ">=3.10")
    assert (e.variant, e.stable, str(e.version)) == (CU130, False, "0.1.0+cu130torch2.11")
    assert e.torch_spec == SpecifierSet("==2.11.*") and e.requires_python == ">=3.10"
    assert entry(STABLE_CU130).stable
    # Without a torch requirement in METADATA the pin comes from the local version's rule.
    assert mi.make_entry(CLASSIC_CPU, SHA).torch_spec == SpecifierSet("==2.9.*")
    assert mi.make_entry(STABLE_CPU, SHA).torch_spec == SpecifierSet(">=2.10")


def test_select_for_index_prefers_stable() -> None:
    stable, classic = entry(STABLE_CU130, ">=2.10"), entry(CLASSIC_CU130, "==2.11.*")
    assert mi.select_for_index([classic, stable]) == [stable]
    assert mi.select_for_index([classic]) == [classic]  # a classic-only variant keeps them


def test_find_links_pages() -> None:
    entries = [
        entry(STABLE_CU130, ">=2.10"),
        entry(CLASSIC_CU130, "==2.11.*"),
        entry(STABLE_CPU, ">=2.10"),
        entry(CLASSIC_CPU, "==2.9.*"),
        entry("fusedops-0.1.0+cu130torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl", "==2.8.*"),
    ]
    pages = mi.find_links_pages(entries, MINORS)
    names = {p: [e.filename for e in es] for p, es in pages.items()}
    assert names["whl/torch-2.11.0+cu130.html"] == [STABLE_CU130, CLASSIC_CU130]
    assert names["whl/torch-2.10.0+cu130.html"] == [STABLE_CU130]
    assert names["whl/torch-2.9.0+cpu.html"] == [CLASSIC_CPU]  # stable needs torch >= 2.10
    assert "whl/torch-2.8.0+cu130.html" in names  # a classic pin adds its own minor
    assert "whl/torch-2.9.0+cu130.html" not in names
    assert list(pages) == sorted(
        pages, key=lambda p: (p.split("+")[1], Version(p[10:].split("+")[0]))
    )


def test_render_project_page() -> None:
    e = entry(STABLE_CU130, ">=2.10", ">=3.10")
    page = mi.render_project_page("fusedops", [e])
    href = f"fusedops-0.1.0%2Bcu130-cp310-abi3-manylinux_2_28_x86_64.whl#sha256={SHA}"
    assert f'<a href="{href}" data-requires-python="&gt;=3.10">{STABLE_CU130}</a>' in page
    assert page.startswith("<!DOCTYPE html>") and "<title>Links for fusedops</title>" in page
    absolute = mi.render_project_page("fusedops", [e], "https://example.org/rel/v0.1.0/")
    assert f'href="https://example.org/rel/v0.1.0/{href}"' in absolute


def test_render_anchor_advertises_metadata_only_when_served() -> None:
    e = entry(STABLE_CU130)
    assert "data-dist-info-metadata" not in mi.render_project_page("fusedops", [e])
    served = mi.render_project_page("fusedops", [replace(e, metadata_sha256="b" * 64)])
    # Both names: PEP 714's data-core-metadata and PEP 658's, which older pips read.
    want = f'data-dist-info-metadata="sha256={"b" * 64}" data-core-metadata="sha256={"b" * 64}"'
    assert want in served


def test_install_command() -> None:
    assert mi.install_command("pip", "cu130", "https://fusedops.github.io/fusedops/") == (
        "pip install fusedops --index-url https://download.pytorch.org/whl/cu130"
        " --extra-index-url https://fusedops.github.io/fusedops/cu130"
    )
    assert mi.install_command("uv", "cpu", "file:///x").startswith("uv pip install fusedops ")
    with pytest.raises(mi.IndexBuildError, match="installer 'conda': expected one of pip, uv"):
        mi.install_command("conda", "cpu", "file:///x")


def test_release_parse() -> None:
    assert mi.Release.parse("v0.1.0=history/v0.1.0/") == mi.Release(
        "v0.1.0", Path("history/v0.1.0")
    )
    assert mi.Release.parse("v0.1.0rc1=d").version == Version("0.1.0rc1")
    assert mi.Release.parse("v1=a=b").wheel_dir == Path("a=b")  # only the first = splits
    for text, message in [
        ("v0.1.0", "is not TAG=DIR"),
        ("=d", "is not TAG=DIR"),
        ("v0.1.0=", "is not TAG=DIR"),
        ("nightly=d", "'nightly' is not vX.Y.Z"),
        ("v0.1/0=d", "is not vX.Y.Z"),
    ]:
        with pytest.raises(mi.IndexBuildError, match=re.escape(message)):
            mi.Release.parse(text)


def test_render_root_index_and_landing() -> None:
    assert '<a href="fusedops/">fusedops</a>' in mi.render_root_index(["fusedops"])
    variants = mi.group_by_variant([entry(STABLE_CPU), entry(STABLE_CU130)])
    assert list(variants) == ["cpu", "cu130"]
    landing = mi.render_landing(variants, ["whl/torch-2.11.0+cu130.html"])
    assert '<a href="cu130/">cu130</a>' in landing and "--index-url" in landing
    assert html.escape(mi.install_command("uv", "cu130", "<this URL>")) in landing
    assert '<a href="whl/torch-2.11.0%2Bcu130.html">torch-2.11.0+cu130.html</a>' in landing


def test_render_find_links_page_escapes() -> None:
    e = entry(STABLE_CPU, python="<4,>=3.10")
    page = mi.render_find_links_page(
        "t", [e], lambda x: mi.wheel_href(x.filename, x.sha256, "../cpu/fusedops")
    )
    assert 'href="../cpu/fusedops/fusedops-0.1.0%2Bcpu' in page
    assert 'data-requires-python="&lt;4,&gt;=3.10"' in page


# --- real files and real pip ---------------------------------------------------------------


def synthetic(out: Path, version: str, tag: str, torch: str) -> Path:
    files = {"fusedops/__init__.py": f"BUILT = {version!r}\n".encode()}
    return wk.write_wheel(out, version, tag, files, requires=[f"torch{torch}"])


@pytest.fixture
def wheel_dir(tmp_path: Path) -> Path:
    d = tmp_path / "wheelhouse"
    synthetic(d, "0.1.0+cu130", "cp310-abi3-linux_x86_64", ">=2.10")
    synthetic(d, "0.1.0+cpu", "cp310-abi3-linux_x86_64", ">=2.10")
    synthetic(d, "0.1.0+cu130torch2.11", f"{PY_TAG}-{PY_TAG}-linux_x86_64", "==2.11.*")
    synthetic(d, "0.1.0+cu130torch2.9", f"{PY_TAG}-{PY_TAG}-linux_x86_64", "==2.9.*")
    return d


def pip_install(target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # never consult this machine's mirrors
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-deps"]
    cmd += ["--target", str(target), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


def installed_version(target: Path) -> str:
    (dist_info,) = target.glob("fusedops-*.dist-info")
    return re.search(r"(?m)^Version: (.*)$", (dist_info / "METADATA").read_text()).group(1)  # type: ignore[union-attr]


def test_build_index_layout_and_hashes(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    result = mi.build_index(wheel_dir, out)
    assert out / "index.html" in result.pages
    assert result.variants == ("cpu", "cu130") and len(result.copied) == 4
    assert result.listed["cu130"] == (STABLE_CU130.replace("manylinux_2_28", "linux"),)
    assert (out / "cu130" / "index.html").read_text().count("<a ") == 1
    page = (out / "cu130" / "fusedops" / "index.html").read_text()
    hrefs = re.findall(r'href="([^"]+)"', page)
    assert len(hrefs) == 1 and "%2Bcu130-cp310-abi3" in hrefs[0]  # stable only
    for variant in ("cu130", "cpu"):
        for href in re.findall(
            r'href="([^"]+)"', (out / variant / "fusedops" / "index.html").read_text()
        ):
            name, digest = href.split("#sha256=")
            copied = out / variant / "fusedops" / name.replace("%2B", "+")
            assert hashlib.sha256(copied.read_bytes()).hexdigest() == digest
    # Classic wheels are copied too (the find-links pages point at them).
    assert len(list((out / "cu130" / "fusedops").glob("*.whl"))) == 3
    assert (out / "whl" / "torch-2.11.0+cu130.html").is_file()
    assert "torch-2.9.0+cu130.html" in (out / "index.html").read_text()


def test_pip_picks_right_wheel_per_variant(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    mi.build_index(wheel_dir, out)
    for variant in ("cu130", "cpu"):
        target = tmp_path / f"site-{variant}"
        proc = pip_install(target, "fusedops", "--index-url", (out / variant).as_uri())
        assert proc.returncode == 0, proc.stderr
        assert installed_version(target) == f"0.1.0+{variant}"
        assert f"0.1.0+{variant}" in (target / "fusedops" / "__init__.py").read_text()


def test_pip_find_links_page_picks_torch_pinned_wheel(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    mi.build_index(wheel_dir, out)
    target = tmp_path / "site"
    page = out / "whl" / "torch-2.11.0+cu130.html"
    proc = pip_install(target, "fusedops", "--no-index", "--find-links", page.as_uri())
    assert proc.returncode == 0, proc.stderr
    assert installed_version(target) == "0.1.0+cu130torch2.11"


def test_pip_rejects_tampered_wheel(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    mi.build_index(wheel_dir, out)
    (copied,) = (out / "cpu" / "fusedops").glob("*.whl")
    with zipfile.ZipFile(copied, "a") as zf:
        zf.writestr("fusedops/evil.py", "x = 1\n")
    proc = pip_install(tmp_path / "site", "fusedops", "--index-url", (out / "cpu").as_uri())
    assert proc.returncode != 0
    assert "DO NOT MATCH THE HASHES" in proc.stderr


def test_variant_wheel_beats_pypi_wheel_in_pip(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    mi.build_index(wheel_dir, out)
    # A public-version 0.1.0 wheel stands in for PyPI's.
    pypi = synthetic(tmp_path / "pypi", "0.1.0", "cp310-abi3-linux_x86_64", ">=2.10")
    target = tmp_path / "site"
    proc = pip_install(
        target,
        "fusedops",
        "--index-url",
        (out / "cu130").as_uri(),
        "--find-links",
        str(pypi.parent),
    )
    assert proc.returncode == 0, proc.stderr
    assert installed_version(target) == "0.1.0+cu130"


def test_base_url_links_instead_of_copying(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    mi.build_index(wheel_dir, out, base_url="https://example.org/releases/v0.1.0")
    assert not list(out.rglob("*.whl"))
    page = (out / "cu130" / "fusedops" / "index.html").read_text()
    assert 'href="https://example.org/releases/v0.1.0/fusedops-0.1.0%2Bcu130-' in page
    flinks = (out / "whl" / "torch-2.11.0+cu130.html").read_text()
    assert "https://example.org/releases/v0.1.0/fusedops-0.1.0%2Bcu130torch2.11" in flinks


def test_cli(wheel_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "index"
    assert mi.main([str(wheel_dir), str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pages under" in printed and "for cpu, cu130" in printed
    assert (out / "cpu" / "fusedops" / "index.html").is_file()


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert mi.main([str(empty), str(tmp_path / "out")]) == 1
    assert "no *.whl in" in _one_line_error(capsys)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "fusedops-garbage.whl").write_bytes(b"")
    assert mi.main([str(bad), str(tmp_path / "out")]) == 1
    assert "not a wheel filename" in _one_line_error(capsys)
    (bad / "fusedops-garbage.whl").rename(bad / "fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl")
    assert mi.main([str(bad), str(tmp_path / "out")]) == 1
    assert "is not a readable wheel (zip)" in _one_line_error(capsys)
    assert not (tmp_path / "out").exists()  # nothing written before every wheel was read


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give WHEEL_DIR OUT_DIR, or --release TAG=DIR ... OUT_DIR"),
        (["{cpu}"], "give WHEEL_DIR OUT_DIR, or --release TAG=DIR ... OUT_DIR"),
        (["{tmp}/nowhere", "{tmp}/out"], "is not a directory"),
        (["{cpu}", "{file}"], "OUT_DIR {file} exists and is not a directory"),
        (["{cpu}", "{tmp}/out", "--torch-minors", "2.9 02.10"], "'02.10' is not a torch minor"),
        (["{cpu}", "{tmp}/out", "--pypi-flavor", "{tmp}/p"], "unrecognized arguments"),
        (["{cpu}", "{tmp}/out", "--base-url", "http://x y"], "is not a URL prefix"),
        (["{cpu}", "{tmp}/out", "--bogus"], "unrecognized arguments: --bogus"),
        (["--release", "v0.1.0={cpu}", "{tmp}/out"], "--release needs --releases-url"),
        (["--releases-url", URL, "{cpu}", "{tmp}/out"], "--releases-url needs --release TAG=DIR"),
        (
            ["--releases-url", URL, "--release", "v0.1.0={cpu}", "--base-url", URL, "{tmp}/out"],
            "--base-url and --release exclude each other",
        ),
        (
            ["--releases-url", URL, "--release", "v0.1.0={cpu}", "{cpu}", "{tmp}/out"],
            "with --release give OUT_DIR only",
        ),
        (["--releases-url", URL, "--release", "v0.1.0={cpu}"], "with --release give OUT_DIR only"),
        (
            [
                "--releases-url",
                URL,
                "--release",
                "v0.1.0={cpu}",
                "--release",
                "v0.1.0={tmp}",
                "{tmp}/out",
            ],
            "--release v0.1.0 given twice",
        ),
        (
            ["--releases-url", URL, "--release", "v0.1.0={tmp}/nowhere", "{tmp}/out"],
            "--release v0.1.0={tmp}/nowhere: not a directory",
        ),
        (["--releases-url", URL, "--release", "v0.1.0", "{tmp}/out"], "'v0.1.0' is not TAG=DIR"),
        (
            ["--releases-url", URL, "--release", "latest={cpu}", "{tmp}/out"],
            "release tag 'latest' is not vX.Y.Z",
        ),
        (
            ["--releases-url", "releases/download", "--release", "v0.1.0={cpu}", "{tmp}/out"],
            "'releases/download' is not an absolute URL",
        ),
        (
            ["--releases-url", URL, "--release", "v0.1.0={cpu}", "{file}"],
            "OUT_DIR {file} exists and is not a directory",
        ),
    ],
)
def test_cli_bad_arguments(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cpu = tmp_path / "cpu"
    synthetic(cpu, "0.1.0+cpu", "cp310-abi3-linux_x86_64", ">=2.10")
    (tmp_path / "file").write_text("")
    fill = {"cpu": str(cpu), "tmp": str(tmp_path), "file": str(tmp_path / "file")}
    assert mi.main([a.format(**fill) for a in args]) == 2
    err = _one_line_error(capsys)
    assert err.startswith("pipeline index: error: ") and message.format(**fill) in err
    assert not (tmp_path / "out").exists()


def test_cli_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert mi.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: pipeline index")


def test_interrupted_write_leaves_the_old_file(tmp_path: Path) -> None:
    dest = tmp_path / "index.html"
    dest.write_text("old")

    def crash(tmp: Path) -> None:
        tmp.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mi._atomic(dest, crash)
    assert dest.read_text() == "old" and sorted(tmp_path.iterdir()) == [dest]


# --- PEP 658 metadata files ----------------------------------------------------------------


def wheel_metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return zf.read(name)


def test_write_metadata_files(wheel_dir: Path) -> None:
    written = mi.write_metadata_files(wheel_dir)
    wheels = sorted(wheel_dir.glob("*.whl"))
    assert written == [w.with_name(w.name + ".metadata") for w in wheels]
    for wheel, meta in zip(wheels, written, strict=True):
        assert meta.read_bytes() == wheel_metadata(wheel)
    assert mi.write_metadata_files(wheel_dir) == written  # idempotent


def test_write_metadata_files_errors(tmp_path: Path) -> None:
    with pytest.raises(mi.IndexBuildError, match=r"no \*\.whl in"):
        mi.write_metadata_files(tmp_path)
    good = synthetic(tmp_path / "a", "0.1.0+cpu", "cp310-abi3-linux_x86_64", ">=2.10")
    wk.rewrite_wheel(
        good, tmp_path / "b" / good.name, drop=["fusedops-0.1.0+cpu.dist-info/METADATA"]
    )
    with pytest.raises(mi.IndexBuildError, match=r"has no \.dist-info/METADATA"):
        mi.write_metadata_files(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / good.name).write_bytes(b"not a zip")
    with pytest.raises(mi.IndexBuildError, match="is not a readable wheel"):
        mi.write_metadata_files(tmp_path / "c")
    assert not list((tmp_path / "c").glob("*.metadata"))


def anchors(page: Path) -> dict[str, dict[str, str]]:
    """File name -> the anchor's attributes, from a PEP 503 page."""
    out = {}
    for attrs, name in re.findall(r"<a ([^>]*)>([^<]+)</a>", page.read_text()):
        out[html.unescape(name)] = {
            k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', attrs)
        }
    return out


def test_copied_index_serves_metadata_files(wheel_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    result = mi.build_index(wheel_dir, out)
    assert len(result.metadata) == 4
    for variant in ("cpu", "cu130"):
        project = out / variant / "fusedops"
        for name, attrs in anchors(project / "index.html").items():
            served = (project / (name + ".metadata")).read_bytes()
            assert served == wheel_metadata(project / name)
            digest = "sha256=" + hashlib.sha256(served).hexdigest()
            assert attrs["data-core-metadata"] == attrs["data-dist-info-metadata"] == digest


def test_linked_index_advertises_metadata_only_when_it_lies_there(
    wheel_dir: Path, tmp_path: Path
) -> None:
    mi.build_index(wheel_dir, tmp_path / "bare", base_url="https://example.org/r")
    (attrs,) = anchors(tmp_path / "bare" / "cpu" / "fusedops" / "index.html").values()
    assert "data-core-metadata" not in attrs  # nothing served there: promise nothing
    mi.write_metadata_files(wheel_dir)
    mi.build_index(wheel_dir, tmp_path / "meta", base_url="https://example.org/r")
    (attrs,) = anchors(tmp_path / "meta" / "cpu" / "fusedops" / "index.html").values()
    assert attrs["data-core-metadata"].startswith("sha256=")
    assert not list((tmp_path / "meta").rglob("*.metadata"))  # linked, not copied
    (stale,) = wheel_dir.glob("*+cpu-*.whl.metadata")
    stale.write_bytes(b"Metadata-Version: 2.1\nName: fusedops\nVersion: 0.0.1\n")
    with pytest.raises(mi.IndexBuildError, match=f"{re.escape(str(stale))} differs from"):
        mi.build_index(wheel_dir, tmp_path / "stale", base_url="https://example.org/r")


def test_pip_uses_the_served_metadata(wheel_dir: Path, tmp_path: Path) -> None:
    # pip resolves from <wheel>.metadata (its -v log names the file it read).
    out = tmp_path / "index"
    mi.build_index(wheel_dir, out)
    proc = pip_install(
        tmp_path / "site", "--dry-run", "-v", "fusedops", "--index-url", (out / "cpu").as_uri()
    )
    assert proc.returncode == 0, proc.stderr
    url = (out / "cpu" / "fusedops").as_uri() + "/fusedops-0.1.0%2Bcpu-cp310-abi3-linux_x86_64.whl"
    assert f"Obtaining dependency information for fusedops from {url}.metadata" in proc.stdout


# --- every release stays in the index -----------------------------------------------------


@pytest.fixture
def releases(tmp_path: Path) -> Path:
    """Two releases' assets as `gh release download` leaves them: releases/<tag>/*.whl.

    The directory's file:// URL stands in for GitHub's releases/download URL:
    releases/<tag>/<file> is where <URL>/<tag>/<file> points.
    """
    root = tmp_path / "releases"
    for version in ("0.1.0", "0.0.9"):
        d = root / f"v{version}"
        synthetic(d, f"{version}+cpu", "cp310-abi3-linux_x86_64", ">=2.10")
        synthetic(d, f"{version}+cu130", "cp310-abi3-linux_x86_64", ">=2.10")
    mi.write_metadata_files(root / "v0.1.0")  # the older release predates metadata files
    return root


def release_args(root: Path) -> list[mi.Release]:
    return [mi.Release.parse(f"{d.name}={d}") for d in sorted(root.iterdir())]


def test_release_index_links_every_release(releases: Path, tmp_path: Path) -> None:
    out = tmp_path / "index"
    result = mi.build_release_index(release_args(releases), out, releases_url=URL + "/")
    assert not list(out.rglob("*.whl")) and not result.copied
    assert result.listed["cpu"] == (
        "fusedops-0.0.9+cpu-cp310-abi3-linux_x86_64.whl",
        "fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl",
    )
    links = anchors(out / "cpu" / "fusedops" / "index.html")
    for version in ("0.0.9", "0.1.0"):
        name = f"fusedops-{version}+cpu-cp310-abi3-linux_x86_64.whl"
        wheel = releases / f"v{version}" / name
        want = f"{URL}/v{version}/{name.replace('+', '%2B')}#sha256={mi.sha256_file(wheel)}"
        assert links[name]["href"] == want
    assert "data-core-metadata" in links["fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl"]
    assert "data-core-metadata" not in links["fusedops-0.0.9+cpu-cp310-abi3-linux_x86_64.whl"]
    flinks = (out / "whl" / "torch-2.14.0+cu130.html").read_text()
    assert f"{URL}/v0.0.9/fusedops-0.0.9%2Bcu130" in flinks


def test_release_index_refuses_a_file_in_two_releases(releases: Path) -> None:
    name = "fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl"
    (releases / "v0.1.1").mkdir()
    (releases / "v0.1.1" / name).write_bytes((releases / "v0.1.0" / name).read_bytes())
    with pytest.raises(
        mi.IndexBuildError, match=f"{re.escape(name)} is in two releases, v0.1.0 and v0.1.1"
    ):
        mi.locate_releases(release_args(releases), URL)


def test_release_index_refuses_wrong_version_or_repeated_tag(releases: Path) -> None:
    wrong = [mi.Release("v0.2.0", releases / "v0.1.0")]
    with pytest.raises(
        mi.IndexBuildError, match=r"release v0\.2\.0 holds fusedops-0\.1\.0.*not of 0\.2\.0"
    ):
        mi.locate_releases(wrong, URL)
    twice = [mi.Release("v0.1.0", releases / "v0.1.0")] * 2
    with pytest.raises(mi.IndexBuildError, match=r"release v0\.1\.0 given twice"):
        mi.locate_releases(twice, URL)
    with pytest.raises(mi.IndexBuildError, match="no release given"):
        mi.locate_releases([], URL)
    (releases / "v0.3.0").mkdir()
    with pytest.raises(mi.IndexBuildError, match=r"no \*\.whl in .*v0\.3\.0"):
        mi.locate_releases([mi.Release("v0.3.0", releases / "v0.3.0")], URL)


def test_older_release_stays_installable_with_pip(releases: Path, tmp_path: Path) -> None:
    # The CLI release.yml runs, with file:// standing in for the GitHub download URL.
    out = tmp_path / "index"
    args = ["--releases-url", releases.as_uri()]
    for d in sorted(releases.iterdir()):
        args += ["--release", f"{d.name}={d}"]
    assert mi.main([*args, str(out)]) == 0
    index = (out / "cpu").as_uri()
    old = pip_install(tmp_path / "old", "fusedops==0.0.9", "--index-url", index)
    assert old.returncode == 0, old.stderr
    assert installed_version(tmp_path / "old") == "0.0.9+cpu"
    new = pip_install(tmp_path / "new", "fusedops", "--index-url", index)
    assert new.returncode == 0, new.stderr
    assert installed_version(tmp_path / "new") == "0.1.0+cpu"


def test_release_cli_errors(
    releases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "fusedops-0.1.0+cpu-cp310-abi3-linux_x86_64.whl"
    (releases / "v0.1.1").mkdir()
    (releases / "v0.1.1" / name).write_bytes((releases / "v0.1.0" / name).read_bytes())
    args = ["--releases-url", URL]
    for d in sorted(releases.iterdir()):
        args += ["--release", f"{d.name}={d}"]
    assert mi.main([*args, str(tmp_path / "out")]) == 1
    assert f"{name} is in two releases, v0.1.0 and v0.1.1" in _one_line_error(capsys)
    assert not (tmp_path / "out").exists()  # refused before anything was written
