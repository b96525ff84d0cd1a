"""Settings of one experiment wheel taking turns in one process: how exp*.py judge a change.

An experiment wheel (a `pip wheel` of csrc with an `exp-*.diff` applied) reads an
environment switch on every launch, so all its settings run in one process on the same
tensors. They take turns (base, a, b, b, a, base, ...) because machines differ between
device calls by more than turns differ within one (benchmarks/NOTES.md), and the mirrored
order gives every setting the same mean position. Before a shape is timed, every setting's
outputs are compared bit for bit with the first setting's: a setting that changed the
numbers is not a like-for-like timing, and the script stops there. Each setting keeps its
fastest turn.

    from inprocess_ab import check_same_outputs, fastest_turns, relative, turn_order

    SETTINGS = {"base": {}, "late": {"FUSEDOPS_EXP_LATE": "1"}}
    check_same_outputs(call, SETTINGS, label="bf16 4096x8192")
    times = fastest_turns(lambda: graph_us(call, calls), SETTINGS, turn_order(SETTINGS, 2))
    relative(times)  # {"late": +0.7}: percent against the first setting

The first setting is the baseline, usually `{}` (the shipped plan). Every function leaves
the switches as it found them. Pure Python and torch tensors, so the logic is tested on the
CPU (tests/pipeline/test_benchmark_tools.py); the timing itself happens on the GPU machine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

Settings = Mapping[str, Mapping[str, str]]  # setting name -> environment switches it sets


def switches(settings: Settings) -> list[str]:
    """Every variable any setting sets, sorted: what `use` clears before setting its own."""
    return sorted({name for env in settings.values() for name in env})


def use(settings: Settings, name: str) -> None:
    """Make `name` the active setting: clear every switch, then set its own."""
    if name not in settings:
        raise KeyError(f"no setting {name!r}; settings: {', '.join(settings)}")
    for var in switches(settings):
        os.environ.pop(var, None)
    os.environ.update(settings[name])


@contextmanager
def switches_restored(settings: Settings) -> Iterator[None]:
    """Put every switch back as it was on entry, however the block ends."""
    saved = {var: os.environ.get(var) for var in switches(settings)}
    try:
        yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def turn_order(names: Sequence[str] | Settings, rounds: int) -> list[str]:
    """`rounds` times the names and then the names reversed: a b c c b a a b c c b a ..."""
    names = list(names)
    if not names:
        raise ValueError("no settings to order")
    if len(set(names)) != len(names):
        raise ValueError(f"a setting is named twice: {names}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    return (names + names[::-1]) * rounds


def as_outputs(result: Any) -> tuple[Any, ...]:
    """An op's result as a tuple of tensors (one tensor, or a tuple or list of them)."""
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def same_bits(got: Any, expected: Any) -> bool:
    """Equal shape, dtype and bits: -0.0 differs from 0.0, and NaNs compare by payload."""
    import torch

    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    view = ints[got.element_size()]
    return torch.equal(got.contiguous().view(view), expected.contiguous().view(view))


def check_same_outputs(call: Callable[[], Any], settings: Settings, label: str = "") -> None:
    """Run `call` under each setting; raise AssertionError if any output's bits differ from
    the first setting's (or the outputs differ in number), naming the setting and output."""
    names = list(settings)
    with switches_restored(settings):
        use(settings, names[0])
        reference = as_outputs(call())
        for name in names[1:]:
            use(settings, name)
            got = as_outputs(call())
            where = f"{label}: " if label else ""
            if len(got) != len(reference):
                raise AssertionError(
                    f"{where}{name} gave {len(got)} outputs, {names[0]} {len(reference)}"
                )
            for i, (g, e) in enumerate(zip(got, reference, strict=True)):
                if not same_bits(g, e):
                    raise AssertionError(
                        f"{where}{name}'s output {i} differs from {names[0]}'s bit for bit"
                    )


def fastest_turns(
    time_call: Callable[[], float], settings: Settings, order: Sequence[str]
) -> dict[str, float]:
    """Each setting's fastest time over its turns in `order` (time_call times the active
    setting once; it is called once a turn). Keys in the settings' own order."""
    unknown = [name for name in order if name not in settings]
    if unknown:
        raise KeyError(f"order names settings that do not exist: {unknown}")
    missing = [name for name in settings if name not in order]
    if missing:
        raise ValueError(f"settings without a turn: {missing}")
    best: dict[str, float] = {}
    with switches_restored(settings):
        for name in order:
            use(settings, name)
            t = time_call()
            best[name] = min(best.get(name, t), t)
    return {name: best[name] for name in settings}


def relative(times: Mapping[str, float], base: str | None = None) -> dict[str, float]:
    """Percent change of every other setting against `base` (default: the first)."""
    names = list(times)
    base = names[0] if base is None else base
    if base not in times:
        raise KeyError(f"no time for the base setting {base!r}")
    return {n: 100.0 * (times[n] / times[base] - 1.0) for n in names if n != base}
