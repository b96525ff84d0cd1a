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

The first setting is the baseline, usually `{}` (the shipped plan). Every function but
`use` leaves the switches as it found them, also when it raises. `fastest_turns` takes any
order (exp52's base, late, late, base, base, late as well as `turn_order`'s). Pure Python
and torch tensors, so the logic is tested on the CPU (tests/pipeline/test_inprocess_ab.py);
the timing itself happens on the GPU machine.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

Settings = Mapping[str, Mapping[str, str]]  # setting name -> environment switches it sets


def switches(settings: Settings) -> list[str]:
    """Every variable any setting sets, sorted: what `use` clears before setting its own."""
    if not settings:
        raise ValueError("no settings: the first one is the baseline, so give at least one")
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
    """An op's result as a tuple (one tensor, or a tuple or list of tensors or None)."""
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _bytes(t: Any) -> Any:
    """t's raw bytes, as benchmarks/tools/same_bits.py hashes them (conjugate and negative
    views resolved first: a lazy view's bytes are not its values')."""
    import torch

    return t.resolve_conj().resolve_neg().contiguous().reshape(-1).view(torch.uint8)


def same_bits(got: Any, expected: Any) -> bool:
    """Equal shape, dtype and bits: -0.0 differs from 0.0, and NaNs compare by payload.
    None equals only None (an op's absent output)."""
    import torch

    if got is None or expected is None:
        return got is None and expected is None
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    return torch.equal(_bytes(got), _bytes(expected))


def _kept(result: Any) -> tuple[Any, ...]:
    """The outputs, copied: a call that reuses its output buffers (a CUDA graph's static
    outputs, an out= op) would otherwise be compared with itself."""
    return tuple(None if t is None else t.clone() for t in as_outputs(result))


def check_same_outputs(call: Callable[[], Any], settings: Settings, label: str = "") -> None:
    """Run `call` under each setting; raise AssertionError if any output's bits differ from
    the first setting's (or the outputs differ in number), naming the setting and output.
    `call` must not change its own inputs: every setting has to see the same ones."""
    names = list(settings)
    with switches_restored(settings):
        use(settings, names[0])
        reference = _kept(call())
        for name in names[1:]:
            use(settings, name)
            got = _kept(call())
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
    setting once; it is called once a turn). Keys in the settings' own order. A time
    that is not a positive finite number stops it: min() would keep or drop a NaN by
    where it fell in the order."""
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
            if not (math.isfinite(t) and t > 0):
                raise ValueError(f"{name}'s turn timed {t!r}: not a positive finite time")
            best[name] = min(best.get(name, t), t)
    return {name: best[name] for name in settings}


def relative(times: Mapping[str, float], base: str | None = None) -> dict[str, float]:
    """Percent change of every other setting against `base` (default: the first)."""
    names = list(times)
    base = names[0] if base is None else base
    if base not in times:
        raise KeyError(f"no time for the base setting {base!r}")
    if not times[base] > 0:
        raise ValueError(f"the base setting's time is {times[base]!r}: nothing to compare with")
    return {n: 100.0 * (times[n] / times[base] - 1.0) for n in names if n != base}
