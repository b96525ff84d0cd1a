"""pipeline.rules: the rules shared with the installed package (src/fusedops/_variant.py).

Variant names, versions (pre-releases and local versions included), local
versions, torch requirements and the find-links page of classic wheels. The
installed package's loader messages (src/fusedops/_compat.py) use the same
functions; they are checked here through the `compat` fixture (conftest.py).
"""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pipeline import rules
from pipeline.rules import REPO, Variant


@pytest.fixture(scope="module")
def variant_module():
    return rules._rules


# ---- Variant ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cuda"),
    [
        ("cpu", None),
        ("cu126", (12, 6)),
        ("cu130", (13, 0)),
        ("cu132", (13, 2)),
        ("cu133", (13, 3)),
        ("cu100", (10, 0)),
    ],
)
def test_variant_round_trips(text, cuda):
    v = Variant.parse(text)
    assert v.cuda == cuda and str(v) == text
    assert Variant.parse(str(v)) == v
    if cuda is not None:
        assert Variant.parse(v.cuda_version) == v  # '13.0' <-> cu130
        assert v.cuda_major == cuda[0] and v.family == f"cu{cuda[0]}"
    else:
        assert (v.is_cpu, v.cuda_version, v.family) == (True, None, "cpu")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("13.0", "cu130"),
        ("13.0.2", "cu130"),
        ("12.8", "cu128"),
        ("10.0", "cu100"),
        ("CU128", "cu128"),
        (" cpu ", "cpu"),
        ("CPU", "cpu"),
    ],
)
def test_variant_spellings(text, want):
    assert str(Variant.parse(text)) == want


def test_variant_of_torch():
    assert Variant.of_torch("13.0") == Variant.parse("cu130")
    assert Variant.of_torch("12.8") == Variant((12, 8))
    assert Variant.of_torch(None) == Variant.of_torch("") == Variant(None)


def test_variants_order_by_cuda_version():
    assert sorted(Variant.parse(v) for v in ("cu130", "cu128", "cu126", "cu132")) == [
        Variant.parse(v) for v in ("cu126", "cu128", "cu130", "cu132")
    ]


@pytest.mark.parametrize(
    "text", ["", "cuda", "cu", "cuda13", "13", "cu13.0", "13.x", "gpu", "rocm6.4"]
)
def test_bad_variants_are_clear_errors(text):
    with pytest.raises(ValueError) as e:
        Variant.parse(text)
    assert str(e.value) == (
        f"variant {text!r}: expected 'cpu', 'cuXY' (cu130) or a CUDA X.Y (13.0)"
    )


def test_one_definition_shared_with_the_package(variant_module):
    assert rules._SOURCE == REPO / "src" / "fusedops" / "_variant.py"
    assert Variant is variant_module.Variant
    assert rules.local_version is variant_module.local_version
    assert rules.find_links_page is variant_module.find_links_page


# ---- versions --------------------------------------------------------------------------

VERSIONS = [
    "2.14.1rc1",
    "2.15.0.dev20260101",
    "2.14.1+cu130",
    "2.10",
    "2.11.0a0+git123",
    "2.9.1",
    "2.14.1.post1",
    "2.16.0b2+cpu",
    "v2.12.0",
    "2.14",
]


@pytest.mark.parametrize("version", VERSIONS)
def test_release_agrees_with_packaging(variant_module, version):
    # the package cannot depend on packaging at run time: its parser must agree with it
    assert variant_module.release(version) == Version(version).release
    release = Version(version).release
    assert variant_module.minor_of(version) == (release[0], release[1])


def test_release_of_a_prerelease_is_not_glued_to_its_number(variant_module):
    assert variant_module.release("2.14.1rc1") == (2, 14, 1)  # not (2, 14, 11)
    assert variant_module.minor_of("2.15.0.dev20260101") == (2, 15)


@pytest.mark.parametrize("text", ["", "torch", "rc1", "+cu130"])
def test_release_rejects_non_versions(variant_module, text):
    with pytest.raises(ValueError, match=r"not a version: "):
        variant_module.release(text)


@pytest.mark.parametrize(
    ("version", "abi"),
    [
        ("2.9.1", "classic"),
        ("2.9.1+cu128", "classic"),
        ("2.10.0", "stable"),
        ("2.10.0rc1", "stable"),
        ("2.10.0a0+git123", "stable"),
        ("2.10", "stable"),
        ("2.15.0.dev20260101", "stable"),
        ("3.0.0", "stable"),
    ],
)
def test_default_abi(version, abi):
    assert rules.default_abi(version) == abi


@pytest.mark.parametrize(
    ("variant", "abi", "torch", "local"),
    [
        ("cu130", "stable", "2.14.1", "cu130"),
        ("cpu", "stable", "2.10.0", "cpu"),
        ("cu128", "classic", "2.9.1+cu128", "cu128torch2.9"),
        ("cu130", "classic", "2.14.1rc1", "cu130torch2.14"),
        ("cpu", "classic", "2.15.0.dev20260101", "cputorch2.15"),
    ],
)
def test_local_version(variant, abi, torch, local):
    assert rules.local_version(Variant.parse(variant), abi, torch) == local


def test_local_version_rejects_an_unknown_abi():
    with pytest.raises(ValueError, match=r"abi 'abi3': expected 'stable' or 'classic'"):
        rules.local_version(Variant(None), "abi3", "2.14.1")


@pytest.mark.parametrize(
    ("abi", "torch", "requirement", "serves", "refuses"),
    [
        ("stable", "2.14.1", ">=2.10", ["2.10.0", "2.15.0", "2.14.1+cu130"], ["2.9.1"]),
        ("classic", "2.9.1+cu128", "==2.9.*", ["2.9.0", "2.9.1+cu128"], ["2.10.0", "2.8.0"]),
        ("classic", "2.14.1rc1", "==2.14.*", ["2.14.0", "2.14.2"], ["2.15.0"]),
    ],
)
def test_torch_requirement(abi, torch, requirement, serves, refuses):
    assert rules.torch_requirement(abi, torch) == requirement
    spec = SpecifierSet(requirement)
    assert all(spec.contains(v) for v in serves) and not any(spec.contains(v) for v in refuses)


def test_stable_target_version_encodes_the_floor():
    value = int(rules.STABLE_TARGET_VERSION, 16)
    assert (value >> 56, (value >> 48) & 0xFF) == rules.STABLE_ABI_MIN_TORCH


def test_base_version_is_the_package_version():
    assert Version(rules.base_version()).local is None


# ---- where the loader sends a user (issue 9 item 6) --------------------------------------


@pytest.mark.parametrize(
    ("variant", "torch", "page"),
    [
        ("cu128", "2.9.1+cu128", "whl/torch-2.9.0+cu128.html"),
        ("cpu", "2.8.0", "whl/torch-2.8.0+cpu.html"),
        ("cu130", "2.9.0rc1", "whl/torch-2.9.0+cu130.html"),
    ],
)
def test_find_links_page(variant, torch, page):
    assert rules.find_links_page(Variant.parse(variant), torch) == page


def test_loader_fix_for_an_old_torch_is_the_find_links_page(compat, monkeypatch):
    # Classic wheels are not in the per-CUDA index (it lists stable wheels only):
    # the fix command for torch < 2.10 must point at its find-links page.
    monkeypatch.setenv("FUSEDOPS_INDEX_URL", "https://example.org/fusedops/")
    command = compat.pip_command("0.1.0", "2.9.1+cu128", "12.8")
    assert command == (
        'pip install --force-reinstall --no-deps "fusedops==0.1.0+cu128torch2.9" '
        "-f https://example.org/fusedops/whl/torch-2.9.0+cu128.html"
    )
    assert "--index-url" not in command


def test_loader_fix_for_a_stable_torch_is_the_variant_index(compat, monkeypatch):
    monkeypatch.setenv("FUSEDOPS_INDEX_URL", "https://example.org/fusedops")
    assert compat.pip_command("0.1.0", "2.14.1+cu130", "13.0") == (
        'pip install --force-reinstall --no-deps "fusedops==0.1.0+cu130" '
        "--index-url https://example.org/fusedops/cu130"
    )
    assert compat.wheel_for("0.1.0", "2.11.0", None) == "0.1.0+cpu"
