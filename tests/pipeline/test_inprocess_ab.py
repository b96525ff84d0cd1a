"""benchmarks/tools/inprocess_ab.py: the turns, the bit check and the switches of exp*.py.

The device scripts time with CUDA graphs; here the same functions run on the CPU with real
torch tensors, and `time_call` is a function of the active switch, so what is checked is
which setting each turn ran under and which time each setting keeps. Nothing is timed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "tools"))
import inprocess_ab as ab  # noqa: E402

SWITCH = "FUSEDOPS_TEST_AB_SWITCH"
OTHER = "FUSEDOPS_TEST_AB_OTHER"
SETTINGS = {"base": {}, "one": {SWITCH: "1"}, "two": {SWITCH: "2", OTHER: "x"}}


@pytest.fixture(autouse=True)
def clean_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SWITCH, raising=False)
    monkeypatch.delenv(OTHER, raising=False)


def active() -> str:
    """Which of SETTINGS the environment holds now."""
    for name, env in SETTINGS.items():
        if all(os.environ.get(var) == env.get(var) for var in ab.switches(SETTINGS)):
            return name
    raise AssertionError(f"no setting matches {SWITCH}={os.environ.get(SWITCH)}")


def test_turns_mirror_so_every_setting_has_the_same_mean_position() -> None:
    order = ab.turn_order(SETTINGS, 2)
    assert order == ["base", "one", "two", "two", "one", "base"] * 2
    means = {n: sum(i for i, m in enumerate(order) if m == n) / order.count(n) for n in SETTINGS}
    assert len(set(means.values())) == 1


@pytest.mark.parametrize(
    ("names", "rounds", "says"),
    [([], 1, "no settings"), (["a", "a"], 1, "named twice"), (["a"], 0, "at least 1")],
)
def test_a_bad_turn_order_is_refused(names: list[str], rounds: int, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        ab.turn_order(names, rounds)


def test_use_clears_the_other_settings_switches() -> None:
    ab.use(SETTINGS, "two")
    assert (os.environ[SWITCH], os.environ[OTHER]) == ("2", "x")
    ab.use(SETTINGS, "one")
    assert os.environ[SWITCH] == "1" and OTHER not in os.environ
    ab.use(SETTINGS, "base")
    assert SWITCH not in os.environ and OTHER not in os.environ


def test_use_of_an_unknown_setting_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="no setting 'three'; settings: base, one, two"):
        ab.use(SETTINGS, "three")


def test_switches_are_restored_when_the_block_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SWITCH, "before")
    with pytest.raises(RuntimeError), ab.switches_restored(SETTINGS):
        ab.use(SETTINGS, "two")
        raise RuntimeError
    assert os.environ[SWITCH] == "before" and OTHER not in os.environ


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
def test_same_bits_tells_signed_zeros_and_nan_payloads_apart(dtype: torch.dtype) -> None:
    zero = torch.zeros(4, dtype=dtype)
    assert ab.same_bits(zero, zero.clone())
    assert not ab.same_bits(zero, -zero)
    assert torch.equal(zero, -zero)  # what a value comparison would have said
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[zero.element_size()]
    nan = torch.full((4,), float("nan"), dtype=dtype)
    other_nan = nan.view(ints).clone()
    other_nan[0] += 1  # another quiet NaN: a different payload
    assert torch.isnan(other_nan.view(dtype)).all()
    assert ab.same_bits(nan, nan.clone())
    assert not ab.same_bits(nan, other_nan.view(dtype))


def test_same_bits_refuses_other_shapes_and_dtypes() -> None:
    x = torch.randn(4, 6)
    assert not ab.same_bits(x, x.reshape(6, 4))
    assert not ab.same_bits(x, x.double())
    ones = torch.ones(8, dtype=torch.bfloat16)
    as_half = ones.view(torch.int16).view(torch.float16)  # the same 16 bits as a half
    assert not ab.same_bits(ones, as_half)
    assert ab.same_bits(x.t(), x.t().contiguous())


def test_same_bits_reads_lazy_conjugates_and_absent_outputs() -> None:
    z = torch.complex(torch.randn(5), torch.randn(5))
    assert ab.same_bits(z.conj(), z.conj().resolve_conj())  # a lazy conjugate, as its values
    assert not ab.same_bits(z.conj(), z)
    x = torch.randn(5)
    assert ab.same_bits(None, None)
    assert not ab.same_bits(x, None) and not ab.same_bits(None, x)


def rms_call() -> tuple[torch.Tensor, torch.Tensor]:
    """Two outputs; setting "two" moves one ulp in the second."""
    x = torch.linspace(-3, 3, 64, dtype=torch.float32).reshape(4, 16)
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    if os.environ.get(SWITCH) == "2":
        y = torch.nextafter(y, torch.full_like(y, float("inf")))
    return x + 0.0, y


def test_equal_outputs_pass_and_the_switches_are_left_as_found() -> None:
    ab.check_same_outputs(rms_call, {"base": {}, "one": {SWITCH: "1"}})
    assert SWITCH not in os.environ


def test_an_output_that_moved_names_the_setting_and_the_output() -> None:
    with pytest.raises(AssertionError, match="fp32 4x16: two's output 1 differs from base's"):
        ab.check_same_outputs(rms_call, SETTINGS, label="fp32 4x16")
    assert SWITCH not in os.environ and OTHER not in os.environ


def test_outputs_written_into_the_same_buffer_are_compared_as_they_were() -> None:
    # A call that returns one buffer it overwrites (a CUDA graph's static output, an out=
    # op): without a copy of the first setting's output, it would be compared with itself.
    buffer = torch.zeros(4)

    def call() -> torch.Tensor:
        buffer.fill_(2.0 if os.environ.get(SWITCH) == "1" else 1.0)
        return buffer

    with pytest.raises(AssertionError, match="one's output 0 differs"):
        ab.check_same_outputs(call, {"base": {}, "one": {SWITCH: "1"}})


def test_an_absent_output_is_compared_too() -> None:
    def call() -> tuple[torch.Tensor, torch.Tensor | None]:
        x = torch.ones(3)
        return x, (x if os.environ.get(SWITCH) == "1" else None)

    ab.check_same_outputs(call, {"base": {}, "two": {SWITCH: "2"}})
    with pytest.raises(AssertionError, match="one's output 1 differs"):
        ab.check_same_outputs(call, {"base": {}, "one": {SWITCH: "1"}})


def test_no_settings_is_refused() -> None:
    with pytest.raises(ValueError, match="no settings"):
        ab.check_same_outputs(lambda: torch.ones(1), {})


def test_a_setting_with_another_number_of_outputs_is_refused() -> None:
    def call() -> object:
        out = rms_call()
        return out[:1] if os.environ.get(SWITCH) == "1" else out

    with pytest.raises(AssertionError, match="one gave 1 outputs, base 2"):
        ab.check_same_outputs(call, SETTINGS)


def test_each_setting_keeps_its_fastest_turn_run_under_its_own_switches() -> None:
    # Each turn's "time" is scripted per setting, in the order its turns come.
    script = {"base": [5.0, 4.0, 6.0, 4.5], "one": [3.0, 3.5, 2.5, 9.0], "two": [7.0] * 4}
    seen: list[str] = []

    def time_call() -> float:
        name = active()
        seen.append(name)
        return script[name][seen.count(name) - 1]

    order = ab.turn_order(SETTINGS, 2)
    times = ab.fastest_turns(time_call, SETTINGS, order)
    assert seen == order
    assert times == {"base": 4.0, "one": 2.5, "two": 7.0}
    assert list(times) == list(SETTINGS)
    assert SWITCH not in os.environ and OTHER not in os.environ
    assert ab.relative(times) == pytest.approx({"one": -37.5, "two": 75.0})
    assert ab.relative(times, base="one") == pytest.approx({"base": 60.0, "two": 180.0})


def test_switches_are_restored_when_a_turn_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OTHER, "before")
    turns: list[str] = []

    def time_call() -> float:
        turns.append(active_switch := os.environ.get(SWITCH, ""))
        if active_switch == "2":
            raise RuntimeError("the device went away")
        return 1.0

    with pytest.raises(RuntimeError, match="went away"):
        ab.fastest_turns(time_call, SETTINGS, ab.turn_order(SETTINGS, 1))
    assert turns == ["", "1", "2"]
    assert os.environ[OTHER] == "before" and SWITCH not in os.environ


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, -1.0])
def test_a_time_that_is_not_a_positive_finite_number_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="one's turn timed"):
        ab.fastest_turns(
            lambda: bad if os.environ.get(SWITCH) == "1" else 1.0,
            SETTINGS,
            ab.turn_order(SETTINGS, 1),
        )
    assert SWITCH not in os.environ and OTHER not in os.environ


def test_an_order_that_skips_or_invents_a_setting_is_refused() -> None:
    with pytest.raises(ValueError, match=r"settings without a turn: \['two'\]"):
        ab.fastest_turns(lambda: 1.0, SETTINGS, ["base", "one"])
    with pytest.raises(KeyError, match="do not exist"):
        ab.fastest_turns(lambda: 1.0, SETTINGS, ["base", "one", "two", "three"])
    with pytest.raises(KeyError, match="base setting 'nope'"):
        ab.relative({"base": 1.0}, base="nope")
    with pytest.raises(ValueError, match="nothing to compare with"):
        ab.relative({"base": 0.0, "one": 1.0})
