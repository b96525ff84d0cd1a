"""scripts/matrix.py: golden output, PyTorch's published facts, lookup, CLI, data validation.

Regenerate the golden file and the docs table after an intended matrix change:
    FUSEDOPS_UPDATE_GOLDEN=1 python -m pytest tests/pipeline/test_matrix.py
and review the diff.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import matrix
import pytest
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
GOLDEN = REPO / "tests" / "pipeline" / "golden" / "matrix_github.json"
DOCS = REPO / "docs" / "MATRIX.md"
TABLE_START, TABLE_END = "<!-- install-table:start -->", "<!-- install-table:end -->"
UPDATE = os.environ.get("FUSEDOPS_UPDATE_GOLDEN", "") == "1"
X86, ARM = "linux_x86_64", "linux_aarch64"
RAW = json.loads(matrix.DATA_FILE.read_text())


@pytest.fixture(scope="module")
def m():
    return matrix.load_matrix()


@pytest.fixture(scope="module")
def release(m):
    return matrix.expand(m)


@pytest.fixture(scope="module")
def every(m):
    return matrix.expand(m, include_optional=True)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(SCRIPTS / "matrix.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


# ---- golden output ------------------------------------------------------------------


def test_github_output_matches_golden():
    out = cli("--github")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1, "GITHUB_OUTPUT needs the JSON on one line"
    got = json.loads(out.stdout)
    if UPDATE:
        GOLDEN.write_text(json.dumps(got, indent=2) + "\n")
    assert got == json.loads(GOLDEN.read_text()), "run with FUSEDOPS_UPDATE_GOLDEN=1, review diff"


def test_docs_install_table_is_generated_from_the_data(m):
    table = matrix.install_table(m) + "\n"
    head, rest = DOCS.read_text().split(TABLE_START + "\n")
    current, tail = rest.split(TABLE_END)
    if UPDATE:
        DOCS.write_text(head + TABLE_START + "\n" + table + TABLE_END + tail)
        current = table
    assert current == table, "run with FUSEDOPS_UPDATE_GOLDEN=1 and review the diff"


# ---- pinned against PyTorch's published compatibility (DESIGN.md field facts) --------

VARIANTS_X86 = {
    "2.8": ["12.6", "12.8", "12.9", "cpu"],
    "2.9": ["12.6", "12.8", "13.0", "cpu"],
    "2.10": ["12.6", "12.8", "13.0", "cpu"],
    "2.11": ["12.6", "12.8", "13.0", "cpu"],
    "2.12": ["12.6", "13.0", "13.2", "cpu"],
    "2.13": ["12.6", "13.0", "13.2", "cpu"],
    "2.14": ["12.6", "13.0", "13.2", "cpu"],
    "2.15": ["13.0", "13.2", "cpu"],
}
VARIANTS_ARM = {**VARIANTS_X86, "2.8": ["12.9", "cpu"]}
LATEST = {"2.8": "2.8.0", "2.9": "2.9.1", "2.10": "2.10.0", "2.11": "2.11.0"}
LATEST |= {"2.12": "2.12.1", "2.13": "2.13.0", "2.14": "2.14.1", "2.15": "2.15.0"}
# CUDA of `pip install torch` from PyPI; before 2.11 PyPI's aarch64 torch was CPU-only.
PYPI = {"2.8": ("12.8", "cpu"), "2.9": ("12.8", "cpu"), "2.10": ("12.8", "cpu")}
PYPI |= {v: ("13.0", "13.0") for v in ("2.11", "2.12", "2.13", "2.14")} | {"2.15": ("13.2", "13.2")}


@pytest.mark.parametrize("minor", VARIANTS_X86)
def test_torch_release_facts(m, minor):
    t = m.release(minor)
    assert t.version == LATEST[minor]
    assert (list(t.cuda[X86]), list(t.cuda[ARM])) == (VARIANTS_X86[minor], VARIANTS_ARM[minor])
    assert (t.pypi_cuda[X86], t.pypi_cuda[ARM]) == PYPI[minor]


def test_python_support(m):
    # torch 2.8 also ships 3.9, which is below fusedops' requires-python
    want = {"2.8": ("3.10", "3.13"), "2.15": ("3.11", "3.15")}
    for minor in VARIANTS_X86:
        pythons = m.release(minor).python
        assert pythons == _python_range(*want.get(minor, ("3.10", "3.14"))), minor


def _python_range(first: str, last: str) -> tuple[str, ...]:
    return tuple(f"3.{n}" for n in range(int(first[2:]), int(last[2:]) + 1))


def test_cu130_stable_arch_list_is_exact(release):
    cells = [c for c in release if c.abi == "stable" and c.variant == "cu130"]
    assert {c.platform for c in cells} == {X86, ARM}
    assert all(c.arch_list == "7.5 8.0 8.6 9.0 10.0 12.0+PTX" for c in cells)


def test_no_cuda13_cell_targets_below_sm75(every):
    for c in every:
        if c.cuda.startswith("13."):
            archs = [
                tuple(map(int, a.removesuffix("+PTX").split("."))) for a in c.arch_list.split()
            ]
            assert min(archs) >= (7, 5), c.id


# ---- expansion ------------------------------------------------------------------------

CONTRACT_KEYS = {"id", "abi", "cuda", "torch", "python", "platform"}
CONTRACT_KEYS |= {"torch_requirement", "python_requirement"}
CI_KEYS = {"variant", "arch_list", "local_version", "runner", "manylinux_image", "cuda_source"}
CI_KEYS |= {"pypi_default", "wheel_tag", "torch_index_url"}


def test_every_cell_has_the_contract_keys(every):
    for c in every:
        assert set(c.to_dict()) >= CONTRACT_KEYS | CI_KEYS


def test_ids_are_unique(every):
    assert len({c.id for c in every}) == len(every)


def test_stable_cells_serve_every_torch_210_and_python_310(m, release):
    stable = [c for c in release if c.abi == "stable"]
    shipped = {
        (matrix.variant_of(cuda), plat)
        for t in m.torch
        if matrix.vtuple(t.minor) >= (2, 10)
        for plat, cudas in t.cuda.items()
        for cuda in cudas
    }
    assert {(c.variant, c.platform) for c in stable} == shipped
    assert {c.variant for c in stable} >= {"cu126", "cu128", "cu130", "cu132", "cpu"}
    for c in stable:
        assert (c.torch_requirement, c.python_requirement) == (">=2.10", ">=3.10")
        assert (c.wheel_tag, c.python, c.local_version) == ("cp310-abi3", "3.11", c.variant)
        assert c.id == f"stable-{c.variant}-{c.platform.removeprefix('linux_')}"


def test_stable_build_torch_is_newest_shipping_the_variant_unless_pinned(m, release):
    stable = [c for c in release if c.abi == "stable"]
    assert {c.torch for c in stable if c.variant in ("cu130", "cpu")} == {"2.14.1"}  # pinned
    for c in stable:
        ships = [t for t in m.torch if any(c.cuda in cs for cs in t.cuda.values())]
        newest = [t for t in ships if matrix.vtuple(t.minor) >= (2, 10)][-1]
        built = m.release(m.stable_pins[c.variant]) if c.variant in m.stable_pins else newest
        assert c.torch == built.version and c.cuda in built.cuda[c.platform], c.id


def test_classic_cells(every):
    for c in (c for c in every if c.abi == "classic"):
        minor = ".".join(c.torch.split(".")[:2])
        assert c.torch_requirement == f"=={minor}.*" and c.python_requirement == f"=={c.python}.*"
        assert c.local_version == f"{c.variant}torch{minor}"
        assert c.wheel_tag == "cp{0}-cp{0}".format(c.python.replace(".", ""))
        assert c.release == (matrix.vtuple(minor) < (2, 10))


def test_release_matrix_is_stable_plus_classic_before_210(release, every):
    assert all(c.release for c in release)
    before_210 = {c.id for c in every if matrix.vtuple(c.torch) < (2, 10)}
    assert {c.id for c in release} == {c.id for c in every if c.abi == "stable"} | before_210


def test_pypi_default_is_stable_cu130_x86_64(every):
    assert [c.id for c in every if c.pypi_default] == ["stable-cu130-x86_64"]


def test_ci_fields(every):
    for c in every:
        source = (
            "none" if c.cuda == "cpu" else "pypi" if c.cuda.startswith("13.") else "nvidia-repo"
        )
        assert c.cuda_source == source
        assert c.runner == {X86: "ubuntu-latest", ARM: "ubuntu-24.04-arm"}[c.platform]
        assert c.torch_index_url.endswith("/" + c.variant)
        assert (c.arch_list == "") == (c.cuda == "cpu")


@pytest.mark.parametrize("version", ["2.8.0", "2.9", "2.9.1+cu128", "2.10.0", "2.14.1", "2.16.0"])
def test_requirements_are_pep440_and_match_like_packaging(every, version):
    for req in {c.torch_requirement for c in every}:
        assert matrix.satisfies(version, req) == SpecifierSet(req).contains(version), req


# ---- find_cell ------------------------------------------------------------------------


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
    ],
)
def test_find_cell(m, cuda, torch, python, abi, want):
    assert matrix.find_cell(cuda, torch, python, abi, "linux_x86_64", matrix=m).id == want


def test_find_cell_platform_spellings(m):
    assert matrix.find_cell("13.0", "2.14.1", "3.11", platform="aarch64", matrix=m).id == (
        "stable-cu130-aarch64"
    )
    assert matrix.find_cell("13.0", "2.14.1", "3.11", platform="arm64", matrix=m).platform == ARM


def test_find_cell_defaults_to_this_platform(m, monkeypatch):
    monkeypatch.setattr(matrix, "this_platform", lambda: ARM)
    assert (
        matrix.find_cell("cpu", "2.9.1", "3.10", matrix=m).id
        == "classic-torch2.9-cpu-py3.10-aarch64"
    )


def test_lookup_error_names_what_torch_ships_and_closest_cells(m):
    with pytest.raises(LookupError) as e:
        matrix.find_cell("12.8", "2.14.1", "3.11", "classic", X86, matrix=m)
    msg = str(e.value)
    assert "no matrix cell for abi=classic cuda=12.8" in msg
    assert "torch 2.14 ships 12.6, 13.0, 13.2, cpu on linux_x86_64" in msg
    assert "stable-cu128-x86_64: abi stable" in msg  # the wheel that would serve it


@pytest.mark.parametrize(
    ("cuda", "torch", "python", "platform", "fragment"),
    [
        ("13.0", "2.7.1", "3.11", X86, "torch 2.7 is not in the matrix (it has 2.8, "),
        ("13.0", "2.9.1", "3.9", X86, "classic-torch2.9-cu130-py3.10-x86_64: python ==3.10.*"),
        ("12.9", "2.9.1", "3.12", ARM, "classic-torch2.8-cu129-py3.12-aarch64: torch ==2.8.*"),
    ],
)
def test_lookup_errors(m, cuda, torch, python, platform, fragment):
    with pytest.raises(LookupError) as e:
        matrix.find_cell(cuda, torch, python, platform=platform, matrix=m)
    assert fragment in str(e.value)


def test_find_cell_rejects_bad_arguments(m):
    with pytest.raises(ValueError, match="abi 'abi3'"):
        matrix.find_cell("13.0", "2.14.1", "3.11", "abi3", X86, matrix=m)
    with pytest.raises(ValueError, match=r"expected e\.g\. 13\.0, cu130 or cpu"):
        matrix.find_cell("cuda13", "2.14.1", "3.11", matrix=m)


@pytest.mark.parametrize(
    ("text", "want"),
    [("13.0", "13.0"), ("13.0.2", "13.0"), ("cu130", "13.0"), ("CU128", "12.8"), ("cpu", "cpu")],
)
def test_normalize_cuda(text, want):
    assert matrix.normalize_cuda(text) == want


def test_variant_of():
    assert [matrix.variant_of(c) for c in ("12.6", "13.0", "cpu")] == ["cu126", "cu130", "cpu"]


def test_buildable_here_is_cpu_and_cuda13_of_this_platform(every, monkeypatch):
    monkeypatch.setattr(matrix, "this_platform", lambda: ARM)
    here = matrix.select(every, buildable_here=True)
    assert here and {c.platform for c in here} == {ARM}
    assert {c.cuda for c in here} == {"cpu", "13.0", "13.2"}


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
        (("--cuda", "thirteen"), 2, "expected e.g. 13.0, cu130 or cpu"),
        (("--find", "--cuda", "13.0"), 2, "--find needs --cuda, --torch and --python"),
        (
            ("--find", "--cuda", "12.8", "--torch", "2.14", "--python", "3.11", "--abi", "classic"),
            2,
            "closest",
        ),
    ],
)
def test_cli_errors(args, rc, fragment):
    out = cli(*args)
    assert (out.returncode, out.stdout) == (rc, "")
    assert fragment in out.stderr


# ---- data validation -------------------------------------------------------------------

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


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (("extra",), 1, "matrix: unknown key(s) ['extra']"),
        (("torch", "2.9", "source"), DELETE, "torch['2.9']: missing key(s) ['source']"),
        (("torch",), [], "torch: expected an object, got list"),
        (("torch", "2.x"), {}, "torch: expected torch minors like '2.14'"),
        (("arch_lists", "13.0"), "7.5,8.0", "'7.5,8.0' is not an arch"),
        (("arch_lists", "13.0"), "7.5+PTX 8.0", "+PTX last only"),
        (("arch_lists", "13.0"), "8.0 7.5", "sorted ascending"),
        (("arch_lists", "13.0"), "7.0 7.5 8.0", "CUDA 13.0 cannot target sm_70"),
        (("arch_lists", "13"), "6.0 7.5", "CUDA 13 cannot target sm_60"),
        (("arch_lists", "12.6"), "8.0 9.0 10.0", "sm_100 needs CUDA >= 12.8, not 12.6"),
        (("arch_lists", "cu130"), "8.0", "expected CUDA versions like '13.0'"),
        (("torch", "2.9", "python"), ["3.11", "3.10"], "sorted ascending"),
        (("torch", "2.9", "python"), ["3.10", "3.10"], "without duplicates"),
        (("torch", "2.9", "python"), ["3.9", "3.10"], "3.9 is below fusedops' minimum Python"),
        (("torch", "2.9", "python"), [], "expected a non-empty list"),
        (("torch", "2.9", "version"), "2.9", "expected a version like '2.14.1'"),
        (("torch", "2.9", "version"), "2.8.0", "2.8.0 is not a 2.9.x release"),
        (("torch", "2.9", "cuda", X86), ["12.4", "cpu"], "'12.4' is not 'cpu' or a CUDA X.Y"),
        (("torch", "2.9", "cuda", X86), ["13", "cpu"], "'13' is not 'cpu' or a CUDA X.Y"),
        (("torch", "2.9", "cuda", X86), ["12.8", "12.6"], "must end with 'cpu'"),
        (("torch", "2.9", "cuda", X86), ["13.0", "12.8", "cpu"], "sorted ascending"),
        (("torch", "2.9", "cuda", ARM), DELETE, "cuda: missing key(s) ['linux_aarch64']"),
        (("torch", "2.9", "cuda", "linux_ppc64le"), ["cpu"], "unknown key(s) ['linux_ppc64le']"),
        (("torch", "2.9", "pypi_cuda", X86), "13.2", "'13.2' is not one of"),
        (("platforms", X86, "image"), "x", "platforms.linux_x86_64: unknown key(s) ['image']"),
        (("platforms", "windows_amd64"), {}, "expected names like 'linux_x86_64'"),
        (("stable_abi", "build_torch_pins"), {"cu130": "2.9"}, "'2.9' is not a stable-ABI torch"),
        (("stable_abi", "build_torch_pins"), {"cu999": "2.14"}, "no stable torch ships 'cu999'"),
        (("stable_abi", "build_torch_pins"), {"cu128": "2.14"}, "torch 2.14 lacks cu128 on"),
        (("stable_abi", "build_python"), "3.10", "torch 2.15 has no Python 3.10"),
        (("stable_abi", "pypi_default", "variant"), "cu118", "cu118 on ['linux_x86_64'] is not a"),
        (("stable_abi", "min_torch"), 2.1, "stable_abi.min_torch: expected a version like"),
    ],
)
def test_bad_data_raises(path, value, fragment):
    with pytest.raises(matrix.MatrixError) as e:
        matrix.parse_matrix(mutated(path, value))
    assert fragment in str(e.value)


def test_bad_json_file(tmp_path):
    bad = tmp_path / "matrix.json"
    bad.write_text('{"torch": ')
    with pytest.raises(matrix.MatrixError, match=r"matrix\.json: not valid JSON"):
        matrix.load_matrix(bad)
    out = cli("--data", str(bad))
    assert out.returncode == 2 and "not valid JSON" in out.stderr


def test_comments_are_allowed_everywhere():
    data = mutated(("torch", "2.9", "_comment"), "why")
    data["platforms"]["_comment"] = "why"
    assert matrix.parse_matrix(data) == matrix.load_matrix()
