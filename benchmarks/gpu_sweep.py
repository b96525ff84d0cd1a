"""GPU sweep: kernel time per call in a CUDA graph, rms_norm, fused_add_rms_norm and silu_and_mul.

    python benchmarks/gpu_sweep.py --csv OUT.csv [--dtypes bfloat16,float16,float32]
        [--impls fusedops,compile,liger,copy[,compile-static]]
        [--ops rms_norm,fused_add_rms_norm,silu_and_mul[,silu_and_mul_backward]]
        [--label NAME] [--quick] [--rows 1,16,128] [--hidden 2048,4096] [--placements 3]
        [--pattern same|rotating|consumer] [--warm-up 3]

For every dtype, rows in 1 ... 65536 (ROWS) and hidden in 2048 ... 16384, each
implementation is captured into a CUDA graph (up to 64 calls on the same
inputs, as many as move about 512 MB), the graph is replayed and timed with
CUDA events (median of `triton.testing.do_bench`), and the time per call is
written as one CSV row. Before an implementation is timed, L2 lines that
earlier kernels left marked evict_last are set back to normal (l2_state.py):
fusedops's prefetch once left x's lines so, as torch.compile's reductions
do, and whatever was timed next on the same x read part of it from the L2.
Shapes that move at most 32 MB are timed on --placements sets of inputs
(default 3, each allocated after spacers that move it elsewhere in memory)
and the median is written: at 1-row shapes where the inputs land moved single
results by up to 30%. The order of the implementations rotates from one shape
(and placement) to the next, so none is always timed first. Inputs that fit
in L2 (up to ~1024 x 4096 bf16) are read from L2 after the first call, as in a model
where the previous kernel has just written them; every implementation, and
the copy, is timed the same way. TB/s counts the fewest bytes that must move:
rms_norm 2·N·H + H elements, fused_add_rms_norm 4·N·H + H, silu_and_mul 3·N·H
(x is N x 2H, the output N x H), silu_and_mul_backward 5·N·H (reads the N x H
gradient and x, writes the N x 2H gradient of x; not in the default --ops).
"copy" is a device-to-device copy of x (2·N·H elements; 4·N·H for
silu_and_mul's and its backward's x), the ceiling drawn in the plots. Only
silu_and_mul_backward is swept as a backward: it is the one backward with a
shape-for-shape Liger kernel; the norms' backward is in bench.py.

--pattern (default same, the pattern above): `rotating` captures the calls over several
sets of inputs taken in turn (ROTATING_SETS, 2 for calls moving more than
ROTATING_SETS_MAX_BYTES), each call's outputs kept until its set comes round again, so no
call writes what the call before wrote; `consumer` does that and follows each call with
a sum over its (first) output, as the next op reading it, and times the pair (TB/s then
counts the op's bytes over the pair's time). On the same tensors, a change that leaves
the outputs in the L2 for the next call's writes looks faster than it is in a model:
v40's streamed loads won 2.0-4.3% there and lost 1.3-2.9% rotating (benchmarks/NOTES.md
v41).

--warm-up N (default 3) times and drops N graphs of a small copy before the first shape:
the first two or so graphs a process times ran fast on an H200 (NOTES.md v44), which made
the first shape of a sweep of one impl fast (up to 0.36 µs at 1 row); beside rivals the
impls take turns and no shape's median held more than one of them. With 3, the first
shape ran at its later time (NOTES.md v45: 1 x 4096 alone, and six sweeps of ours alone
whose first shape was within 0.9% of the same shape beside rivals); `--warm-up 0` times as
before v45.

Implementations: fusedops; torch.compile of the same math in float32
(manual_rms_norm, and for the fused add the unfused `x + r` then the norm),
compiled once per (op, dtype, hidden) with rows dynamic (rows = 1 is
specialised by dynamo, so it gets its own graph): what a model sees as its
batch changes. Inductor picks its kernel for the rows it first compiles at, so this
understates a torch.compile made for large batches (at hidden 16384 from 4096 rows
its times were 1.5-2.1 times those of one compiled first at 4096 rows, v37); `--impls ...,compile-static` adds the same functions compiled with every shape
static (a graph per shape, a compile each). Liger-Kernel's LigerRMSNormFunction and
LigerFusedAddRMSNormFunction and LigerSiLUMulFunction (if importable; silu gets
gate and up as two contiguous copies of x's halves, made once, as Liger's MLP has
them, never views of x, which its backward would overwrite for the others; its
backward is Liger's swiglu_backward, which writes its gradients into gate and
up: each replay works on the previous one's output (values drift to zeros, and
after some thousands of calls to NaN; what that does to Liger's own time was not
measured), and its working
set is 3·N·H elements where fusedops and torch.compile, returning a new
gradient, have 5·N·H, so it keeps more in L2 between calls). For the
silu backward, torch.compile gets the float32 math autograd computes. A
script, not a test: plot the CSV with benchmarks/plot_sweep.py.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import random
import statistics
import sys
from collections.abc import Callable, Sequence

import torch
from l2_state import reset_l2_persisting
from provenance import measured_commit
from references import (
    EPS,
    allow_many_graphs,
    eager_silu_and_mul,
    manual_add_rms_norm,
    manual_rms_norm,
    manual_silu_and_mul_backward,
)

# 256-2048 rows: where a batch takes the occupancy builds in one to a few waves.
# Until v26 the grid went from 128 to 1024 to 4096, and the 16 shapes behind a
# rival there by 1.2-7.5% (the fused add at 256-512 x 16384 and 1536 x 4096
# among them) did not show (benchmarks/RESULTS.md v26).
ROWS = (1, 16, 128, 256, 512, 1024, 1536, 2048, 4096, 16384, 65536)
HIDDEN = (2048, 4096, 8192, 16384)
DTYPES = ("bfloat16", "float16", "float32")
IMPLS = ("fusedops", "compile", "liger", "copy")
# Not in the default --impls: torch.compile with every shape static, one graph (and
# one inductor kernel choice) per row count. "compile" is compiled once per
# (op, dtype, hidden) at the grid's first rows, and inductor's kernel for those rows
# took 1.5-2.1 times as long at hidden 16384 from 4096 rows as the same function
# compiled first at 4096 rows (benchmarks/NOTES.md, v37). Costs a compile per shape.
OPT_IN_IMPLS = ("compile-static",)
# What a probe may name with --impls: the sweep's default implementations and the opt-in ones.
KNOWN_IMPLS = IMPLS + OPT_IN_IMPLS
OPS = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "silu_and_mul_backward")
DEFAULT_OPS = OPS[:3]
# A graph holds up to MAX_CALLS calls, as many as move GRAPH_BYTES: the graph
# launch is amortised and large shapes still take one call per replay.
GRAPH_BYTES = 512 << 20
MAX_CALLS = 64
# Shapes that move at most this many bytes are timed on --placements sets of
# inputs, each allocated after fresh spacers, and the median is kept: at 1-row
# shapes on an H200 one set of inputs put every implementation up to 30% away
# from its median, depending on where the inputs and the outputs landed
# (benchmarks/tools/placement_probe.py). Larger shapes take one set (time).
PLACED_MAX_BYTES = 32 << 20
# --pattern: how a graph's calls meet the memory (see the docstring). Rotating over 4 sets
# keeps a call's working set out of the L2 by the next time its set comes round for any
# call moving more than a quarter of it; past ROTATING_SETS_MAX_BYTES a call is far past
# any L2 and 2 sets keep the memory of the largest shapes (the float32 fused add at
# 65536 x 16384: 8 GiB of inputs a set) within the GPU's.
PATTERNS = ("same", "rotating", "consumer")
ROTATING_SETS = 4
ROTATING_SETS_MAX_BYTES = 1 << 30

FIELDS = [
    "label",
    "gpu",
    "torch",
    "commit",
    "date",
    "dtype",
    "op",
    "impl",
    "rows",
    "hidden",
    "placements",
    "pattern",
    "us",
    "bytes",
    "tbps",
]


torch._dynamo.config.automatic_dynamic_shapes = False  # only rows is dynamic, by mark_dynamic
allow_many_graphs()
compiled_rms_norm = torch.compile(manual_rms_norm)
compiled_fused_add = torch.compile(manual_add_rms_norm)
compiled_silu_and_mul = torch.compile(eager_silu_and_mul)
COMPILED = {
    "rms_norm": compiled_rms_norm,
    "fused_add_rms_norm": compiled_fused_add,
    "silu_and_mul": compiled_silu_and_mul,
    "silu_and_mul_backward": torch.compile(manual_silu_and_mul_backward),
}
# compile-static: the same functions compiled apart, with no dimension dynamic.
COMPILED_STATIC = {
    "rms_norm": torch.compile(manual_rms_norm, dynamic=False),
    "fused_add_rms_norm": torch.compile(manual_add_rms_norm, dynamic=False),
    "silu_and_mul": torch.compile(eager_silu_and_mul, dynamic=False),
    "silu_and_mul_backward": torch.compile(manual_silu_and_mul_backward, dynamic=False),
}


def liger_ops() -> dict[str, Callable] | None:
    try:
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction, swiglu_backward
    except ImportError:
        return None
    return {
        "rms_norm": lambda x, w: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", False),
        "fused_add_rms_norm": lambda x, r, w: LigerFusedAddRMSNormFunction.apply(
            x, r, w, EPS, 0.0, "llama", False
        ),
        "silu_and_mul": lambda gate, up: LigerSiLUMulFunction.apply(gate, up),
        "silu_and_mul_backward": lambda grad, gate, up: swiglu_backward(gate, up, grad),
    }


def moved_elements(op: str, rows: int, hidden: int) -> int:
    """The fewest elements the op must move at (rows, hidden)."""
    per_row = (
        {
            "rms_norm": 2,
            "fused_add_rms_norm": 4,
            "silu_and_mul": 3,
            "silu_and_mul_backward": 5,
        }[op]
        * rows
        * hidden
    )
    return per_row + (hidden if op in ("rms_norm", "fused_add_rms_norm") else 0)


def make_inputs(op: str, rows: int, hidden: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    """The op's inputs at (rows, hidden)."""
    if op == "silu_and_mul":
        return (torch.randn(rows, 2 * hidden, dtype=dtype, device="cuda"),)
    if op == "silu_and_mul_backward":
        grad = torch.randn(rows, hidden, dtype=dtype, device="cuda")
        x = torch.randn(rows, 2 * hidden, dtype=dtype, device="cuda")
        return grad, x
    data = [torch.randn(rows, hidden, dtype=dtype, device="cuda")]
    if op == "fused_add_rms_norm":
        data.append(torch.randn_like(data[0]))
    w = torch.randn(hidden, dtype=dtype, device="cuda")
    return (*data, w)


def calls_per_graph(op: str, rows: int, hidden: int, dtype: torch.dtype, sets: int = 1) -> int:
    """Calls captured in one graph: as many as move GRAPH_BYTES, 1 to MAX_CALLS, rounded
    down to a multiple of `sets` (at least `sets`) so that a rotating pattern's graph
    takes every input set equally often."""
    moved = moved_elements(op, rows, hidden) * dtype.itemsize
    return whole_rounds(max(1, min(MAX_CALLS, GRAPH_BYTES // moved)), sets)


def whole_rounds(calls: int, sets: int) -> int:
    """`calls` rounded down to a multiple of `sets`, at least one round: each input set
    is taken equally often."""
    return sets * max(1, calls // sets)


def largest(inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The input the copy moves: x (the first of the largest)."""
    return max(inputs, key=lambda t: t.numel())


def first_output(result: object) -> list[object]:
    """What the next op reads of a result: its first output (the fused add's normed
    output, not the residual sum the next layer reads later)."""
    return [result[0] if isinstance(result, tuple | list) else result]


def every_output(result: object) -> list[object]:
    """Every tensor of a result: silu_and_mul_backward's gradient of x, which Liger
    returns as two halves and the others as one tensor."""
    return list(result) if isinstance(result, tuple | list) else [result]


def consumed(op: str) -> Callable[[object], list[object]]:
    """What the consumer pattern sums of op's result. The copy's is its own output (x's
    size: for silu_and_mul twice the op's output), so its consumer line reads more."""
    return every_output if op == "silu_and_mul_backward" else first_output


def patterns(
    calls: Sequence[Callable[[], object]],
    reads: Callable[[object], list[object]] = first_output,
) -> dict[str, Callable[[], None]]:
    """The three patterns' step over `calls` (one call per input set): `same` runs the
    first, `rotating` the next in turn, keeping its result in that set's slot until the
    set comes round again; `consumer` does that and sums what `reads` picks of the
    result (the next op reading it)."""
    if not calls:
        raise ValueError("no calls: give one per input set")
    kept: list[object] = [None] * len(calls)
    turn = [0]

    def rotating() -> None:
        k = turn[0] % len(calls)
        turn[0] += 1
        kept[k] = calls[k]()

    def consumer() -> None:
        rotating()
        for t in reads(kept[(turn[0] - 1) % len(calls)]):
            t.sum()

    def same() -> None:
        calls[0]()

    return {"same": same, "rotating": rotating, "consumer": consumer}


def pattern_step(
    op: str, pattern: str, fns: Sequence[Callable[[], object]]
) -> Callable[[], object]:
    """What one timed call of `pattern` runs over `fns` (one per input set): the first
    call itself for `same`, else patterns()'s step, the consumer summing consumed(op)."""
    return fns[0] if pattern == "same" else patterns(fns, consumed(op))[pattern]


def input_sets(pattern: str, moved_bytes: int) -> int:
    """How many input sets a pattern takes for a call moving `moved_bytes`."""
    if pattern == "same":
        return 1
    return ROTATING_SETS if moved_bytes <= ROTATING_SETS_MAX_BYTES else 2


def shape_input_sets(pattern: str, op: str, rows: int, hidden: int, dtype: torch.dtype) -> int:
    """input_sets() for one call of op at (rows, hidden) in dtype."""
    return input_sets(pattern, moved_elements(op, rows, hidden) * dtype.itemsize)


def captured(fn: Callable[[], object], calls: int, reset_l2: bool = True) -> torch.cuda.CUDAGraph:
    """A graph of `calls` calls of fn, after one call outside it (compilation,
    autotuning, allocation): what graph_us times, for the probes to replay.
    Then (reset_l2) the L2 lines earlier kernels left evict_last are set back
    to normal (l2_state.py), so that the replays do not read what the
    implementation timed before this one left behind."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    if reset_l2:
        reset_l2_persisting()
    return graph


WARM_UP_GRAPHS = 3  # with 3 the first shape ran at its later time (NOTES.md v45)


def add_warm_up_arg(parser: argparse.ArgumentParser, before: str) -> None:
    """--warm-up N, for this sweep and tools/call_patterns.py: graphs dropped `before`."""
    parser.add_argument(
        "--warm-up",
        type=int,
        default=WARM_UP_GRAPHS,
        help=f"graphs of a small copy timed and dropped before {before} (the first "
        "graphs a process times can run fast)",
    )


def check_warm_up(parser: argparse.ArgumentParser, graphs: int) -> None:
    """A usage error for a negative --warm-up."""
    if graphs < 0:
        parser.error(f"--warm-up must be 0 or more, not {graphs}")


def warm_up(graphs: int) -> None:
    """Times and drops `graphs` graphs of a small copy. The first two or so graphs a
    process times ran fast on an H200 (NOTES.md v44): bf16 rms_norm 1 x 4096 at 1.43 µs
    as the first shape, 1.79 µs again later in the same process, the SM clock at 1980 MHz
    throughout. A sweep of one impl took its first shape's median from them; beside
    rivals the impls take turns and no median held more than one."""
    if graphs == 0:
        return
    src = torch.zeros(1 << 12, device="cuda")
    out = torch.empty_like(src)
    for _ in range(graphs):
        graph_us(lambda: out.copy_(src), 64)
    # do_bench's L2-flush buffer stays in torch's cache: hand it back, so that
    # the first shape's spacers and inputs are placed as without the warm-up (but for
    # these two 16 KB tensors, alive until the return).
    torch.cuda.empty_cache()


def graph_us(fn: Callable[[], object], calls: int, reset_l2: bool = True) -> float:
    """Microseconds per call of fn, `calls` calls captured in one graph and
    replayed (reset_l2: as captured())."""
    from triton.testing import do_bench

    graph = captured(fn, calls, reset_l2)
    ms = do_bench(graph.replay, warmup=5, rep=30, return_mode="median")
    del graph
    return 1e3 * ms / calls


def implementation(op: str, impl: str, inputs: tuple[torch.Tensor, ...], lg):
    """A zero-argument callable, or None if the impl is unavailable here."""
    if impl == "copy":
        src = largest(inputs)
        out = torch.empty_like(src)
        return lambda: out.copy_(src)
    if impl == "fusedops":
        import fusedops

        if op == "silu_and_mul":
            return lambda: fusedops.silu_and_mul(*inputs)
        if op == "silu_and_mul_backward":
            return lambda: torch.ops.fusedops.silu_and_mul_backward(*inputs)
        fn = fusedops.rms_norm if op == "rms_norm" else fusedops.fused_add_rms_norm
        return lambda: fn(*inputs, EPS)
    if impl == "compile":
        fn = COMPILED[op]
        for t in inputs:
            if t.dim() == 2 and t.shape[0] > 1:  # rows, not the weight
                torch._dynamo.mark_dynamic(t, 0)
        return lambda: fn(*inputs)
    if impl == "compile-static":
        fn = COMPILED_STATIC[op]
        # New tensor objects: "compile" marks rows dynamic on the inputs themselves.
        static = tuple(t.view_as(t) for t in inputs)
        return lambda: fn(*static)
    if impl == "liger":
        if lg is None:
            return None
        if op.startswith("silu_and_mul"):
            x = inputs[-1]
            # Copies, never views: Liger's backward writes its gradients into gate
            # and up. At one row x[:, :d] is already contiguous, so .contiguous()
            # returned a view, and Liger overwrote x itself for every implementation
            # timed after it (NaN lanes after some thousands of calls, which send
            # fusedops's sigmoid to its IEEE division: RESULTS.md, v17).
            gate, up = (t.clone(memory_format=torch.contiguous_format) for t in x.chunk(2, -1))
            return lambda: lg[op](*inputs[:-1], gate, up)
        return lambda: lg[op](*inputs)
    raise ValueError(impl)


def impl_step(
    op: str, impl: str, pattern: str, sets: Sequence[tuple[torch.Tensor, ...]], lg
) -> Callable[[], object] | None:
    """One timed call of impl in `pattern` over `sets` (one implementation() per input
    set, pattern_step over them), or None if the impl is unavailable here. A rotating
    step keeps each set's outputs until it is dropped."""
    fns = [implementation(op, impl, inputs, lg) for inputs in sets]
    return None if fns[0] is None else pattern_step(op, pattern, fns)


def rotated(impls: list[str], k: int) -> list[str]:
    """impls starting at index k mod len: each shape times them in a new order.

    With a fixed order (fusedops always first), Liger and the copy once ran
    6-15% faster at nine 64-128 MB shapes than in any other sweep, only with
    torch.compile in the same process; the cause was not isolated. Rotating
    keeps whatever the order does from always landing on the same one.
    """
    k %= len(impls)
    return impls[k:] + impls[:k]


def spacers(rng: random.Random) -> list[torch.Tensor]:
    """Allocations that move the next inputs elsewhere: 0-1 MB from the
    allocator's small-block pool and 2-38 MB from its large one."""
    small = rng.randrange(0, 256) * 4096
    large = (2 << 20) * rng.randrange(1, 20)
    return [torch.empty(n, dtype=torch.uint8, device="cuda") for n in (small, large) if n]


def time_shape(
    op: str,
    rows: int,
    hidden: int,
    dtype: torch.dtype,
    impls: list[str],
    lg,
    placements: int,
    rng: random.Random,
    first: int,
    pattern: str = "same",
) -> tuple[dict[str, float], tuple[torch.Tensor, ...]]:
    """Median microseconds per call of each available impl over `placements`
    sets of inputs (each after fresh spacers), and the last set of inputs.
    The order of the impls rotates from `first` on, one step per placement.
    `pattern` other than same: each placement is input_sets() sets, taken in turn."""
    times: dict[str, list[float]] = {}
    held: list[object] = []
    n_sets = shape_input_sets(pattern, op, rows, hidden, dtype)
    calls = calls_per_graph(op, rows, hidden, dtype, n_sets)
    for p in range(placements):
        if placements > 1:
            held += spacers(rng)
        sets = [make_inputs(op, rows, hidden, dtype) for _ in range(n_sets)]
        held.append(sets)
        for impl in rotated(impls, first + p):
            step = impl_step(op, impl, pattern, sets, lg)
            if step is None:
                continue
            times.setdefault(impl, []).append(graph_us(step, calls))
            if pattern != "same":  # its step keeps n_sets outputs: free them before the next
                del step
    return {impl: statistics.median(ts) for impl, ts in times.items()}, sets[0]


def sweep(args, meta: dict[str, str], writer, flush: Callable[[], None] = lambda: None) -> None:
    """Every shape's rows, flushed after each shape: a sweep cut by a timeout keeps them."""
    lg = liger_ops() if "liger" in args.impls else None
    warm_up(args.warm_up)
    rows_list = args.rows or ((1, 128, 16384) if args.quick else ROWS)
    hidden_list = args.hidden or ((4096, 16384) if args.quick else HIDDEN)
    rng = random.Random(0)
    shape_index = 0
    for dtype_name in args.dtypes:
        dtype = getattr(torch, dtype_name)
        esize = dtype.itemsize
        for op in args.ops:
            for hidden in hidden_list:
                for rows in rows_list:
                    moved = moved_elements(op, rows, hidden) * esize
                    placements = args.placements if moved <= PLACED_MAX_BYTES else 1
                    times, inputs = time_shape(
                        op,
                        rows,
                        hidden,
                        dtype,
                        args.impls,
                        lg,
                        placements,
                        rng,
                        shape_index,
                        args.pattern,
                    )
                    for impl in args.impls:
                        if impl not in times:
                            continue
                        us = times[impl]
                        nbytes = 2 * largest(inputs).numel() * esize if impl == "copy" else moved
                        writer.writerow(
                            {
                                **meta,
                                "dtype": dtype_name,
                                "op": op,
                                "impl": impl,
                                "rows": rows,
                                "hidden": hidden,
                                "placements": placements,
                                "pattern": args.pattern,
                                "us": f"{us:.3f}",
                                "bytes": nbytes,
                                "tbps": f"{nbytes / us / 1e6:.4f}",
                            }
                        )
                        print(f"{dtype_name} {op} {impl} {rows}x{hidden}: {us:.2f} us", flush=True)
                    del inputs
                    flush()
                    shape_index += 1
                torch.cuda.empty_cache()


def choices(
    parser: argparse.ArgumentParser, flag: str, text: str, known: tuple[str, ...]
) -> list[str]:
    """The comma-separated entries of `text`, or a parser error naming any not in `known`."""
    given = [v for v in text.split(",") if v]
    unknown = sorted(set(given) - set(known))
    if unknown:
        parser.error(f"unknown {flag} {','.join(unknown)} (choose from {','.join(known)})")
    return given


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True, help="write the rows here")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--impls", default=",".join(IMPLS))
    parser.add_argument("--ops", default=",".join(DEFAULT_OPS))
    parser.add_argument("--label", default="", help="names this run in the CSV (e.g. a variant)")
    parser.add_argument("--quick", action="store_true", help="a few shapes")
    parser.add_argument(
        "--placements",
        type=int,
        default=3,
        help="input sets timed per shape of at most 32 MB moved (median kept)",
    )
    parser.add_argument(
        "--rows", help="comma-separated row counts (default: the sweep's, or --quick's)"
    )
    parser.add_argument("--hidden", help="comma-separated hidden sizes (default: as --rows)")
    parser.add_argument(
        "--pattern",
        default="same",
        choices=PATTERNS,
        help="same tensors every call (default), rotating input sets, or rotating with a "
        "consumer of each output",
    )
    add_warm_up_arg(parser, "the first shape")
    args = parser.parse_args(argv)
    if args.placements < 1:
        parser.error(f"--placements must be at least 1, not {args.placements}")
    check_warm_up(parser, args.warm_up)
    try:
        args.rows = tuple(int(v) for v in args.rows.split(",")) if args.rows else None
        args.hidden = tuple(int(v) for v in args.hidden.split(",")) if args.hidden else None
    except ValueError as e:
        parser.error(f"--rows/--hidden take comma-separated integers: {e}")
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    args.impls = choices(parser, "--impls", args.impls, KNOWN_IMPLS)
    args.ops = choices(parser, "--ops", args.ops, OPS)
    if not torch.cuda.is_available():
        print("gpu_sweep.py needs a CUDA GPU", file=sys.stderr)
        return 2
    meta = {
        "label": args.label,
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "commit": measured_commit(),
        "date": datetime.date.today().isoformat(),
    }
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        sweep(args, meta, writer, f.flush)
    return 0


if __name__ == "__main__":
    sys.exit(main())
