"""pipeline.matrix and pipeline.cell: golden output, derived facts, lookup, CLI, strict data.

Regenerate the golden file and the docs table after an intended matrix change:
    FUSEDOPS_UPDATE_GOLDEN=1 python -m pytest tests/pipeline/test_matrix.py
and review the diff. Tests that need other data load the real matrix.json and
change a deep copy (written to tmp_path where a file is needed); no test keeps
its own copy of the data.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from pipeline import config, matrix, matrix_cli, rules
from pipeline.archs import ArchList, ArchListError
from pipeline.cell import Cell
from pipeline.rules import Variant

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "pipeline" / "golden" / "matrix_github.json"
DOCS = REPO / "docs" / "MATRIX.md"
TABLE_START, TABLE_END = "<!-- install-table:start -->", "<!-- install-table:end -->"
UPDATE = os.environ.get("FUSEDOPS_UPDATE_GOLDEN", "") == "1"
X86, ARM = "linux_x86_64", "linux_aarch64"
RAW = json.loads(matrix.DATA_FILE.read_text())


@pytest.fixture(scope="module")
def m() -> matrix.Matrix:
    return matrix.load()


@pytest.fixture(scope="module")
def release(m) -> list[Cell]:
    return matrix.expand(m)


@pytest.fixture(scope="module")
def every(m) -> list[Cell]:
    return matrix.expand(m, include_optional=True)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python scripts/matrix.py ARGS`, the path workflows and users call."""
    cmd = [sys.executable, str(REPO / "scripts" / "matrix.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)


def module_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m pipeline matrix ARGS`."""
    cmd = [sys.executable, "-m", "pipeline", "matrix", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)


# ---- golden output ------------------------------------------------------------------


def test_github_output_matches_golden():
    out = cli("--github")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1, "GITHUB_OUTPUT needs the JSON on one line"
    got = json.loads(out.stdout)
    if UPDATE:
        GOLDEN.write_text(json.dumps(got, indent=2) + "\n")
    assert got == json.loads(GOLDEN.read_text()), "run with FUSEDOPS_UPDATE_GOLDEN=1, review diff"


def test_module_entry_point_prints_the_same():
    script, module = cli("--github"), module_cli("--github")
    assert (module.returncode, module.stdout) == (0, script.stdout)


def test_docs_install_table_is_generated_from_the_data(m):
    table = matrix_cli.install_table(m) + "\n"
    head, rest = DOCS.read_text().split(TABLE_START + "\n")
    current, tail = rest.split(TABLE_END)
    if UPDATE:
        DOCS.write_text(head + TABLE_START + "\n" + table + TABLE_END + tail)
        current = table
    assert current == table, "run with FUSEDOPS_UPDATE_GOLDEN=1 and review the diff"
    assert module_cli("--install-table").stdout == table


# ---- Cell: every output field is a property -----------------------------------------

# to_github() key -> how the cell answers it
FIELDS = {
    "id": lambda c: c.id,
    "abi": lambda c: c.abi,
    "cuda": lambda c: c.cuda,
    "variant": lambda c: str(c.variant),
    "torch": lambda c: str(c.torch),
    "python": lambda c: c.python,
    "platform": lambda c: c.platform.name,
    "torch_requirement": lambda c: c.torch_requirement,
    "python_requirement": lambda c: c.python_requirement,
    "local_version": lambda c: c.local_version,
    "wheel_tag": lambda c: c.wheel_tag,
    "arch_list": lambda c: str(c.archs) if c.archs else "",
    "runner": lambda c: c.platform.runner,
    "manylinux_image": lambda c: c.platform.manylinux_image,
    "pypi_part": lambda c: c.pypi_part,
    "gcc": lambda c: c.gcc,
    "test_torch": lambda c: list(c.test_torches or (str(c.torch),)),
}


def test_to_github_fields_are_the_cells_properties(every):
    for c in every:
        out = c.to_github()
        assert set(out) == set(FIELDS) - ({"gcc"} if c.variant.is_cpu else set()), c.id
        for key, value in out.items():
            assert value == FIELDS[key](c), (c.id, key)
        assert all(isinstance(v, str | bool | int | list) for v in out.values()), c.id


def test_by_id_finds_every_cell(m, every):
    for c in every:
        assert matrix.by_id(c.id, m) == c


def test_by_id_unknown_names_close_ids(m):
    with pytest.raises(LookupError) as e:
        matrix.by_id("stable-cu999-x86_64", m)
    assert "no cell 'stable-cu999-x86_64' in matrix.json; close: stable-" in str(e.value)


def test_ids_are_unique(every):
    assert len({c.id for c in every}) == len(every)


def test_wheel_filename_parses_back(every):
    for c in every:
        name = c.wheel_filename("manylinux_2_28_" + c.platform.machine)
        dist, version, build, tags = parse_wheel_filename(name)
        assert (dist, version, build) == ("fusedops", Version(c.version()), ()), c.id
        assert version.local == c.local_version
        assert {f"{t.interpreter}-{t.abi}" for t in tags} == {c.wheel_tag}, c.id
        assert {t.platform for t in tags} == {f"manylinux_2_28_{c.platform.machine}"}


def test_version_uses_the_package_base_version(release):
    cell = release[0]
    assert cell.version() == f"{rules.base_version()}+{cell.local_version}"
    assert cell.version("9.9.9") == f"9.9.9+{cell.local_version}"


def test_built_with_keeps_the_cell_and_changes_torch_and_python(m):
    cell = matrix.by_id("stable-cu132-x86_64", m)
    local = cell.built_with(torch="2.14.1", python="3.12")
    assert (local.id, local.torch, local.python) == (cell.id, Version("2.14.1"), "3.12")
    assert (local.local_version, local.wheel_tag) == (cell.local_version, cell.wheel_tag)


# ---- the rules the cells follow ----------------------------------------------------------


def test_archs_and_gcc_come_from_the_toolkit_entry(m, every):
    for c in every:
        if c.variant.is_cpu:
            assert (c.archs, c.gcc, c.toolkit_source) == (None, None, "none"), c.id
            continue
        toolkit = m.toolkit(c.cuda)
        assert (c.archs, c.gcc) == (toolkit.archs, toolkit.gcc), c.id
        assert c.toolkit_source == ("pypi" if c.variant.cuda_major >= 13 else "nvidia-repo")


def test_no_cuda13_cell_targets_below_sm75(every):
    for c in every:
        if c.variant.cuda_major == 13:
            assert min((a.major, a.minor) for a in c.archs.archs) >= (7, 5), c.id


def test_platform_fields_come_from_the_platform_entry(m, every):
    for c in every:
        assert c.platform == m.platforms[c.platform.name]
        assert "@sha256:" in c.platform.manylinux_image
        assert c.torch_index_url == f"https://download.pytorch.org/whl/{c.variant}"
        assert c.index_dir == str(c.variant)


def test_stable_cells_serve_every_torch_210_and_python_310(m, release):
    stable = [c for c in release if c.abi == "stable"]
    shipped = {
        (Variant.parse(cuda), plat)
        for t in m.torch
        if (t.version.major, t.version.minor) >= rules.STABLE_ABI_MIN_TORCH
        for plat, cudas in t.cuda.items()
        for cuda in cudas
    }
    assert {(c.variant, c.platform.name) for c in stable} == shipped
    for c in stable:
        assert (c.torch_requirement, c.python_requirement) == (">=2.10", ">=3.10")
        assert (c.wheel_tag, c.python, c.local_version) == ("cp310-abi3", "3.11", str(c.variant))
        assert c.id == f"stable-{c.variant}-{c.platform.machine}"


def test_stable_build_torch_is_newest_shipping_the_variant_unless_pinned(m, release):
    for c in (c for c in release if c.abi == "stable"):
        if str(c.variant) in m.pins:
            built = m.release(m.pins[str(c.variant)])
        else:
            built = [
                t for t in m.stable_releases if c.cuda in {x for v in t.cuda.values() for x in v}
            ][-1]
        assert c.torch == built.version and c.cuda in built.cuda[c.platform.name], c.id
        assert c.python in built.python


def test_classic_cells(every):
    for c in (c for c in every if c.abi == "classic"):
        minor = c.torch_minor
        assert c.torch_requirement == f"=={minor}.*" and c.python_requirement == f"=={c.python}.*"
        assert c.local_version == f"{c.variant}torch{minor}"
        assert c.wheel_tag == "cp{0}-cp{0}".format(c.python.replace(".", ""))
        assert c.release == ((c.torch.major, c.torch.minor) < rules.STABLE_ABI_MIN_TORCH)
        assert c.id == f"classic-torch{minor}-{c.variant}-py{c.python}-{c.platform.machine}"


def test_test_torches_are_the_floor_and_the_build_torch(m, every):
    for c in every:
        if c.abi == "classic":
            assert c.test_torches == (str(c.torch),), c.id
            continue
        floor = next(t for t in m.stable_releases if c.cuda in t.cuda[c.platform.name])
        assert c.test_torches == tuple(dict.fromkeys([str(floor.version), str(c.torch)])), c.id
        assert all(SpecifierSet(c.torch_requirement).contains(t) for t in c.test_torches)


def test_release_matrix_is_stable_plus_classic_before_210(release, every):
    assert all(c.release for c in release)
    before_210 = {c.id for c in every if c.torch < Version("2.10")}
    assert {c.id for c in release} == {c.id for c in every if c.abi == "stable"} | before_210


def test_pypi_parts_are_the_configured_stable_cells(m, every):
    want = {f"stable-{v}-{m.platforms[p].machine}" for v in m.pypi_parts for p in m.pypi_platforms}
    assert {c.id for c in every if c.pypi_part} == want
    # one library per family: CPU, CUDA 12 and CUDA 13
    assert sorted(v.family for v in m.pypi_parts) == ["cpu", "cu12", "cu13"]
    assert [c.id for c in matrix.pypi_cells(m)] == sorted(want, key=[c.id for c in every].index)


@pytest.mark.parametrize(
    "version", ["2.8.0", "2.9", "2.9.1+cu128", "2.10.0", "2.14.1", "2.16.0", "2.15.0.dev20260101"]
)
def test_select_by_torch_matches_packaging(every, version):
    chosen = {c.id for c in matrix.select(every, torch=version)}
    want = {c.id for c in every if SpecifierSet(c.torch_requirement).contains(version, True)}
    assert chosen == want


def test_a_torch_prerelease_is_served_by_the_stable_cells(every):
    chosen = matrix.select(every, torch="2.16.0rc1", python="3.12", platform="x86_64")
    assert chosen and {c.abi for c in chosen} == {"stable"}


# ---- find ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cuda", "torch", "python", "abi", "want"),
    [
        ("13.0", "2.14.1", "3.11", "stable", "stable-cu130-x86_64"),
        ("cu130", "2.14.1", "3.11", "classic", "classic-torch2.14-cu130-py3.11-x86_64"),
        ("13.0", "2.11.0", "3.12", "classic", "classic-torch2.11-cu130-py3.12-x86_64"),
        ("cpu", "2.14.1", "3.11", "stable", "stable-cpu-x86_64"),
        ("cu132", "2.15.0", "3.13", "stable", "stable-cu132-x86_64"),
        ("13.0", "2.14.1+cu130", "3.11", None, "stable-cu130-x86_64"),  # default abi
        ("12.8", "2.9.1", "3.12", None, "classic-torch2.9-cu128-py3.12-x86_64"),
        ("13.0.2", "2.10", "3.14", None, "stable-cu130-x86_64"),
        ("13.0", "2.15.0rc1", "3.12", None, "stable-cu130-x86_64"),
        ("12.8", "2.9.0a0+git123", "3.10", None, "classic-torch2.9-cu128-py3.10-x86_64"),
    ],
)
def test_find(m, cuda, torch, python, abi, want):
    assert matrix.find(Variant.parse(cuda), torch, python, abi, X86, m=m).id == want


def test_find_platform_spellings(m):
    cu130 = Variant.parse("cu130")
    assert (
        matrix.find(cu130, "2.14.1", "3.11", platform="aarch64", m=m).id == "stable-cu130-aarch64"
    )
    assert matrix.find(cu130, "2.14.1", "3.11", platform="arm64", m=m).platform.name == ARM


def test_find_defaults_to_this_platform(m, monkeypatch):
    monkeypatch.setattr(matrix, "this_platform", lambda: ARM)
    cell = matrix.find(Variant(None), "2.9.1", "3.10", m=m)
    assert cell.id == "classic-torch2.9-cpu-py3.10-aarch64"


@pytest.mark.parametrize(
    ("cuda", "torch", "python", "platform", "fragments"),
    [
        (
            "12.8",
            "2.14.1",
            "3.11",
            X86,
            [
                "no matrix cell for abi=classic variant=cu128 platform=linux_x86_64",
                "torch 2.14 ships 12.6, 13.0, 13.2, cpu on linux_x86_64, for Python 3.10,",
            ],
        ),
        ("13.0", "2.7.1", "3.11", X86, ["torch 2.7 is not in the matrix (it has 2.8, "]),
        ("13.0", "2.9.1", "3.9", X86, ["python=3.9", "for Python 3.10, 3.11"]),
        ("12.9", "2.9.1", "3.12", ARM, ["torch 2.9 ships 12.6, 12.8, 13.0, cpu on linux_aarch64"]),
    ],
)
def test_lookup_errors(m, cuda, torch, python, platform, fragments):
    with pytest.raises(LookupError) as e:
        matrix.find(Variant.parse(cuda), torch, python, "classic", platform, m=m)
    for fragment in fragments:
        assert fragment in str(e.value)


def test_lookup_error_reads_a_prerelease_torch_as_its_minor(m):
    with pytest.raises(LookupError) as e:
        matrix.find(Variant.parse("cu128"), "2.14rc1", "3.11", "classic", X86, m=m)
    assert "torch 2.14 ships 12.6, 13.0, 13.2, cpu on linux_x86_64" in str(e.value)
    assert "is not in the matrix" not in str(e.value)


def test_buildable_here_is_cpu_and_cuda13_of_this_platform(every, monkeypatch):
    monkeypatch.setattr(matrix, "this_platform", lambda: ARM)
    here = matrix.select(every, buildable_here=True)
    assert here and {c.platform.name for c in here} == {ARM}
    assert {c.cuda for c in here} == {"cpu", "13.0", "13.2"}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("x86_64", X86),
        ("linux_x86_64", X86),
        ("linux-x86_64", X86),
        ("arm64", ARM),
        ("AARCH64", ARM),
    ],
)
def test_normalize_platform(text, want):
    assert matrix.normalize_platform(text) == want


def test_toolkit_of_an_unlisted_minor_is_the_newest_of_its_major(m):
    assert m.toolkit("13.1") is m.cuda["13.2"] and m.toolkit("13.0") is m.cuda["13.0"]
    with pytest.raises(matrix.MatrixError, match=r"CUDA 11\.8: no entry of CUDA 11\.x"):
        m.toolkit("11.8")


# ---- arch lists: the one grammar -----------------------------------------------------------


def test_arch_list_grammar():
    archs = ArchList.parse("7.5 8.0;9.0+PTX")
    assert archs == ArchList.parse(["7.5", "8.0", "9.0+PTX"])
    assert (str(archs), archs.as_list()) == ("7.5 8.0 9.0+PTX", ["7.5", "8.0", "9.0+PTX"])
    assert (archs.sass, archs.ptx) == (["sm_75", "sm_80", "sm_90"], ["compute_90"])


def test_every_cells_arch_list_round_trips(every):
    for c in (c for c in every if c.archs):
        assert ArchList.parse(str(c.archs)) == c.archs
        assert ArchList.parse(c.archs.as_list()) == c.archs
        c.archs.check_cuda(c.variant.cuda)


@pytest.mark.parametrize(
    ("archs", "cuda", "message"),
    [
        ("8.0 10.0", (12, 6), "sm_100 needs CUDA >= 12.8, not 12.6"),
        ("9.0 11.0", (12, 9), "sm_110 needs CUDA >= 13.0, not 12.9"),
        ("7.0 8.0", (13, 0), "CUDA 13.0 cannot target sm_70 (needs >= 7.5)"),
        ("5.0 8.0", (13, 2), "CUDA 13.2 cannot target sm_50 (needs >= 7.5)"),
    ],
)
def test_arch_list_check_cuda(archs, cuda, message):
    with pytest.raises(ArchListError) as e:
        ArchList.parse(archs).check_cuda(cuda)
    assert str(e.value) == message


# ---- command line ----------------------------------------------------------------------


def ids(out: subprocess.CompletedProcess[str]) -> list[str]:
    assert out.returncode == 0, out.stderr
    return [c["id"] for c in json.loads(out.stdout)["include"]]


def test_cli_filters_combine():
    stable = cli("--github", "--abi", "stable", "--cuda", "cu130")
    assert ids(stable) == ["stable-cu130-x86_64", "stable-cu130-aarch64"]
    arm = cli("--github", "--platform", "aarch64", "--torch", "2.9", "--python", "3.12")
    assert ids(arm) == [
        f"classic-torch2.9-{v}-py3.12-aarch64" for v in ("cu126", "cu128", "cu130", "cpu")
    ]
    both = cli("--github", "--include-classic-for-stable", "--cuda", "13.0", "--torch", "2.14.1")
    assert ids(both)[0] == "stable-cu130-x86_64" and len(ids(both)) == 2 + 2 * 5
    classic = cli("--github", "--abi", "classic", "--include-classic-for-stable", "--torch", "2.11")
    assert all("torch2.11" in i for i in ids(classic))
    # --id reaches optional cells without --include-classic-for-stable
    one = cli("--github", "--id", "classic-torch2.14-cu130-py3.12-x86_64")
    assert ids(one) == ["classic-torch2.14-cu130-py3.12-x86_64"]


def test_cli_table_and_find():
    table = cli()
    golden_cells = len(json.loads(GOLDEN.read_text())["include"])
    assert table.returncode == 0 and table.stdout.splitlines()[0].startswith("id ")
    assert table.stdout.rstrip().endswith(f"{golden_cells} cells")
    found = cli(
        "--find", "--cuda", "cpu", "--torch", "2.14.1", "--python", "3.11", "--platform", "x86_64"
    )
    assert json.loads(found.stdout)["id"] == "stable-cpu-x86_64"


@pytest.mark.parametrize(
    ("args", "rc", "fragment"),
    [
        (("--github", "--abi", "classic", "--torch", "2.14"), 1, "--include-classic-for-stable"),
        (("--github", "--include-classic-for-stable"), 1, "256-job limit"),
        (("--cuda", "thirteen"), 2, "variant 'thirteen': expected 'cpu', 'cuXY' (cu130)"),
        (("--torch", "2.x"), 2, "argument --torch: '2.x' is not a version"),
        (("--find", "--cuda", "13.0"), 2, "--find needs --cuda, --torch and --python"),
        (("--id", "stable-cu999-x86_64"), 2, "unknown cell id(s): stable-cu999-x86_64"),
        (
            ("--find", "--cuda", "12.8", "--torch", "2.14", "--python", "3.11", "--abi", "classic"),
            2,
            "torch 2.14 ships 12.6, 13.0, 13.2, cpu",
        ),
    ],
)
def test_cli_errors(args, rc, fragment):
    out = cli(*args)
    assert (out.returncode, out.stdout) == (rc, "")
    assert fragment in out.stderr
    assert "Traceback" not in out.stderr


# ---- strict data -----------------------------------------------------------------------

DELETE = object()


def mutated(path: tuple[str, ...], value: object) -> dict:
    data = copy.deepcopy(RAW)
    *parents, last = path
    node = data
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return data


def write(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "matrix.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def test_duplicate_key_is_an_error_naming_it(tmp_path):
    text = json.dumps(RAW, indent=1)
    dup = text.replace('"build_python": "3.11"', '"build_python": "3.11", "build_python": "3.12"')
    assert dup != text
    with pytest.raises(matrix.MatrixError) as e:
        matrix.load(write(tmp_path, dup))
    assert str(e.value) == (
        "matrix.json: duplicate key(s) ['build_python'] in one object (JSON keeps only the last)"
    )


def test_duplicate_torch_minor_is_an_error(tmp_path):
    text = json.dumps(RAW, indent=1)
    dup = text.replace('"2.9": {', '"2.9": {"version": "2.9.0"}, "2.9": {', 1)
    with pytest.raises(matrix.MatrixError, match=r"duplicate key\(s\) \['2\.9'\]"):
        matrix.load(write(tmp_path, dup))


IMAGE = RAW["platforms"][X86]["manylinux_image"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        # non-canonical versions
        (("torch", "02.14"), RAW["torch"]["2.14"], "torch: key '02.14' is not a torch minor like '2.14'"),
        (("torch", "2.14", "version"), "2.14.01", "torch['2.14'].version: expected a version like '2.14.1', got '2.14.01'"),
        (("torch", "2.9", "version"), "2.9", "torch['2.9'].version: expected a version like '2.14.1', got '2.9'"),
        (("torch", "2.9", "version"), "2.8.0", "torch['2.9'].version: 2.8.0 is not a 2.9.x release"),
        (("cuda", "13.00"), RAW["cuda"]["13.0"], "cuda: key '13.00' is not a CUDA version like '13.0'"),
        (("cuda", "cu130"), RAW["cuda"]["13.0"], "cuda: key 'cu130' is not a CUDA version like '13.0'"),
        # unknown and missing fields
        (("extra",), 1, "matrix: unknown key(s) ['extra']"),
        (("torch", "2.14", "extra"), 1, "torch['2.14']: unknown key(s) ['extra']"),
        (("cuda", "13.0", "arch"), "8.0", "cuda['13.0']: unknown key(s) ['arch']"),
        (("platforms", X86, "image"), "x", "platforms.linux_x86_64: unknown key(s) ['image']"),
        (("stable_abi", "min_torch"), "2.10", "stable_abi: unknown key(s) ['min_torch']"),
        (("torch", "2.9", "source"), DELETE, "torch['2.9']: missing key(s) ['source']"),
        (("cuda", "13.0", "gcc"), DELETE, "cuda['13.0']: missing key(s) ['gcc']"),
        (("torch",), [], "torch: expected an object, got list"),
        # container images
        (("platforms", X86, "manylinux_image"), IMAGE.split("@")[0], "platforms.linux_x86_64.manylinux_image: expected an image pinned by digest"),
        (("platforms", X86, "manylinux_image"), IMAGE.split("@")[0] + ":latest", "got 'quay.io/pypa/manylinux_2_28_x86_64:latest'"),
        (("platforms", X86, "manylinux_image"), IMAGE[:-1], "platforms.linux_x86_64.manylinux_image: expected an image pinned by digest"),
        (("platforms", "windows_amd64"), {}, "platforms: key 'windows_amd64' is not linux_x86_64 or linux_aarch64"),
        # host compilers
        (("cuda", "13.0", "gcc"), "14", "cuda['13.0'].gcc: expected a GCC major version like 14, got '14'"),
        (("cuda", "13.0", "gcc"), 14.0, "cuda['13.0'].gcc: expected a GCC major version like 14, got 14.0"),
        (("cuda", "13.0", "gcc"), True, "cuda['13.0'].gcc: expected a GCC major version like 14, got True"),
        (("cuda", "12.6", "gcc"), 8, "cuda['12.6'].gcc: expected a GCC major version like 14, got 8"),
        # arch lists
        (("cuda", "13.0", "archs"), "7.5,8.0", "cuda['13.0'].archs: arch '7.5,8.0': expected a form like 8.0"),
        (("cuda", "13.0", "archs"), "8.0 7.5", "cuda['13.0'].archs: arch list '8.0 7.5': must be ascending"),
        (("cuda", "13.0", "archs"), "8.0 8.0", "must be ascending without duplicates"),
        (("cuda", "13.0", "archs"), "", "cuda['13.0'].archs: empty arch list"),
        (("cuda", "13.0", "archs"), "7.0 7.5 8.0", "cuda['13.0'].archs: CUDA 13.0 cannot target sm_70"),
        (("cuda", "12.6", "archs"), "8.0 9.0 10.0", "cuda['12.6'].archs: sm_100 needs CUDA >= 12.8, not 12.6"),
        # torch releases
        (("torch", "2.9", "python"), ["3.11", "3.10"], "torch['2.9'].python: must be sorted ascending"),
        (("torch", "2.9", "python"), ["3.10", "3.10"], "without duplicates"),
        (("torch", "2.9", "python"), ["3.9", "3.10"], "torch['2.9'].python: 3.9 is below fusedops' minimum Python"),
        (("torch", "2.9", "python"), ["3.010"], "torch['2.9'].python: expected Python versions like '3.12'"),
        (("torch", "2.9", "python"), [], "torch['2.9'].python: expected a non-empty list"),
        (("torch", "2.9", "cuda", X86), ["12.4", "cpu"], "torch['2.9'].cuda.linux_x86_64: '12.4' is not 'cpu' or a CUDA X.Y listed"),
        (("torch", "2.9", "cuda", X86), ["13", "cpu"], "'13' is not 'cpu' or a CUDA X.Y"),
        (("torch", "2.9", "cuda", X86), ["12.8", "12.6"], "torch['2.9'].cuda.linux_x86_64: must end with 'cpu'"),
        (("torch", "2.9", "cuda", X86), ["13.0", "12.8", "cpu"], "torch['2.9'].cuda.linux_x86_64: must be sorted ascending"),
        (("torch", "2.9", "cuda", ARM), DELETE, "torch['2.9'].cuda: missing key(s) ['linux_aarch64']"),
        (("torch", "2.9", "cuda", "linux_ppc64le"), ["cpu"], "torch['2.9'].cuda: unknown key(s) ['linux_ppc64le']"),
        (("torch", "2.9", "pypi_cuda", X86), "13.2", "torch['2.9'].pypi_cuda.linux_x86_64: '13.2' is not one of"),
        # the stable ABI section
        (("stable_abi", "build_torch_pins"), {"cu130": "2.9"}, "stable_abi.build_torch_pins.cu130: '2.9' is not a stable-ABI torch minor"),
        (("stable_abi", "build_torch_pins"), {"cu999": "2.14"}, "stable_abi.build_torch_pins: no stable torch ships 'cu999'"),
        (("stable_abi", "build_torch_pins"), {"cu128": "2.14"}, "stable_abi.build_torch_pins: torch 2.14 lacks cu128 on linux_x86_64"),
        (("stable_abi", "build_python"), "3.10", "stable_abi.build_python: torch 2.15 has no Python 3.10"),
        (("stable_abi", "pypi_wheel", "parts"), ["cpu", "cu118"], "stable_abi.pypi_wheel.parts: cu118 is not a stable cell"),
        (("stable_abi", "pypi_wheel", "parts"), ["cpu", "cuda"], "stable_abi.pypi_wheel.parts: variant 'cuda': expected"),
        (("stable_abi", "pypi_wheel", "parts"), ["cu130", "cu132"], "stable_abi.pypi_wheel.parts: one library per family, got ['cu13', 'cu13']"),
        (("stable_abi", "pypi_wheel", "platforms"), ["linux_riscv64"], "stable_abi.pypi_wheel.platforms: ['linux_riscv64'] are not all platforms"),
    ],
)  # fmt: skip
def test_bad_data_is_an_error_naming_the_entry(tmp_path, path, value, message):
    with pytest.raises(matrix.MatrixError) as e:
        matrix.load(write(tmp_path, mutated(path, value)))
    assert message in str(e.value)


def test_cli_reports_bad_data_in_one_line(tmp_path):
    out = cli("--data", str(write(tmp_path, mutated(("torch", "2.14", "version"), "2.14.01"))))
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        "matrix: error: torch['2.14'].version: expected a version like '2.14.1', got '2.14.01'\n"
    )


def test_bad_json_file(tmp_path):
    bad = write(tmp_path, '{"torch": ')
    with pytest.raises(matrix.MatrixError, match=r"matrix\.json: not valid JSON"):
        matrix.load(bad)
    out = cli("--data", str(bad))
    assert out.returncode == 2 and "not valid JSON" in out.stderr and "Traceback" not in out.stderr


def test_missing_file(tmp_path):
    with pytest.raises(matrix.MatrixError, match=r"cannot read .*nope\.json: No such file"):
        matrix.load(tmp_path / "nope.json")


def test_comments_are_allowed_everywhere(tmp_path, m):
    data = mutated(("torch", "2.9", "_comment"), "why")
    data["platforms"]["_comment"] = "why"
    data["cuda"]["13.0"]["_comment"] = "why"
    assert matrix.load(write(tmp_path, data)) == m


# ---- adding a CUDA variant is one edit to the data -----------------------------------------

CU133_ARCHS = "7.5 8.0 8.6 9.0 10.0 11.0 12.0+PTX"  # differs from 13.2's: shows it is used


@pytest.fixture(scope="module")
def with_cu133(tmp_path_factory) -> Path:
    """A copy of the real matrix.json with CUDA 13.3 added: its `cuda` entry and torch 2.15's lists."""
    data = copy.deepcopy(RAW)
    data["cuda"]["13.3"] = {"archs": CU133_ARCHS, "gcc": 15}
    for plat, variants in data["torch"]["2.15"]["cuda"].items():
        data["torch"]["2.15"]["cuda"][plat] = [*variants[:-1], "13.3", "cpu"]
    path = tmp_path_factory.mktemp("cu133") / "matrix.json"
    path.write_text(json.dumps(data, indent=1))
    return path


def test_new_cuda_variant_reaches_the_matrix_output(with_cu133):
    out = cli("--data", str(with_cu133), "--github", "--cuda", "13.3")
    assert out.returncode == 0, out.stderr
    cells = json.loads(out.stdout)["include"]
    assert [c["id"] for c in cells] == ["stable-cu133-x86_64", "stable-cu133-aarch64"]
    for c in cells:
        assert (c["variant"], c["cuda"], c["local_version"]) == ("cu133", "13.3", "cu133")
        assert (c["wheel_tag"], c["torch"], c["torch_requirement"]) == (
            "cp310-abi3",
            "2.15.0",
            ">=2.10",
        )
        assert (c["arch_list"], c["gcc"]) == (CU133_ARCHS, 15)
    classic = cli(
        "--data", str(with_cu133), "--github", "--include-classic-for-stable", "--cuda", "cu133"
    )
    assert len(ids(classic)) == 2 + 2 * 5  # + torch 2.15's Pythons on both platforms


def test_new_cuda_variant_cells_are_typed_and_found(with_cu133):
    m = matrix.load(with_cu133)
    cell = matrix.by_id("stable-cu133-x86_64", m)
    assert cell.variant == Variant((13, 3)) and cell.index_dir == "cu133"
    assert cell.wheel_filename("manylinux_2_28_x86_64", "0.1.0") == (
        "fusedops-0.1.0+cu133-cp310-abi3-manylinux_2_28_x86_64.whl"
    )
    assert cell.toolkit_source == "pypi" and cell.torch_index_url.endswith("/cu133")
    assert matrix.find(Variant.parse("13.3"), "2.15.0", "3.12", platform=X86, m=m) == cell
    # the other variants are untouched
    assert matrix.by_id("stable-cu132-x86_64", m) == matrix.by_id("stable-cu132-x86_64")


def test_new_cuda_variant_reaches_the_loader_messages(compat):
    # what fusedops' loader tells a user whose torch reports torch.version.cuda == "13.3"
    assert compat.wheel_for("0.1.0", "2.15.0+cu133", "13.3") == "0.1.0+cu133"
    command = compat.pip_command("0.1.0", "2.15.0+cu133", "13.3")
    assert '"fusedops==0.1.0+cu133"' in command
    assert command.endswith(f"--index-url {compat.index_url()}/cu133")


def test_new_cuda_variant_reaches_setup_py(with_cu133):
    m = matrix.load(with_cu133)
    env_knobs = {}
    plan = config.decide(
        base_version="0.1.0",
        torch_version="2.15.0+cu133",
        torch_cuda="13.3",
        toolkit_version="13.3",
        env=env_knobs,
        matrix=m,
        python="3.12",
    )
    assert (plan.version, plan.cell.archs, plan.cell.gcc) == (
        "0.1.0+cu133",
        ArchList.parse(CU133_ARCHS),
        15,
    )
    by_cell = config.decide(
        base_version="0.1.0",
        torch_version="2.15.0+cu133",
        torch_cuda="13.3",
        toolkit_version="13.3",
        env={"FUSEDOPS_CELL": "stable-cu133-x86_64"},
        matrix=m,
        python="3.11",
    )
    assert by_cell.cell.id == "stable-cu133-x86_64" and by_cell.version == "0.1.0+cu133"
    assert by_cell.build_info(None)["arch_list"] == CU133_ARCHS.split()


def test_new_cuda_variant_index_routing(with_cu133, tmp_path):
    from pipeline import index

    m = matrix.load(with_cu133)
    cell = matrix.by_id("stable-cu133-x86_64", m)
    name = cell.wheel_filename("manylinux_2_28_x86_64", "0.1.0")
    assert index.route(name) == (Version("0.1.0+cu133"), Variant((13, 3)), "stable")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / name, "w") as whl:
        metadata = (
            f"Name: fusedops\nVersion: 0.1.0+cu133\nRequires-Dist: torch{cell.torch_requirement}\n"
        )
        whl.writestr("fusedops-0.1.0+cu133.dist-info/METADATA", metadata)
    result = index.build_index(wheels, tmp_path / "site", torch_minors=[t.minor for t in m.torch])
    assert dict(result.listed) == {cell.index_dir: (name,)}
    assert name in (tmp_path / "site" / "cu133" / "fusedops" / "index.html").read_text()
    assert (tmp_path / "site" / "cu133" / "fusedops" / name).is_file()
