"""The command lines of the probes: --op, --dtype, one --shape and --impls for the one-shape
probes (graph_dram_probe.py, output_offset_probe.py), checked the same way in both; --cases
OP:DTYPE:ROWSxHIDDEN,... for the graph probes (graph_neighbor_probe.py,
graph_timeline_probe.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from ncu_target import DTYPES, parse_shapes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_sweep import DTYPES as SWEEP_DTYPES
from gpu_sweep import KNOWN_IMPLS, OPS, choices


def add_shape_probe_args(parser: argparse.ArgumentParser) -> None:
    """--op, --dtype, --shape ROWSxHIDDEN and --impls, with the probes' defaults."""
    parser.add_argument("--op", default="rms_norm", choices=OPS)
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES)
    parser.add_argument("--shape", type=parse_shapes, default="16384x2048", help="ROWSxHIDDEN")
    parser.add_argument("--impls", default="fusedops,liger,copy", help=",".join(KNOWN_IMPLS))


def shape_probe_args(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[int, int, torch.dtype, list[str]]:
    """(rows, hidden, dtype, impls) from add_shape_probe_args's options; a
    usage error for more than one shape or an unknown implementation."""
    if len(args.shape) != 1:
        parser.error("--shape takes one ROWSxHIDDEN")
    impls = choices(parser, "--impls", args.impls, KNOWN_IMPLS)
    (rows, hidden), dtype = args.shape[0], getattr(torch, args.dtype)
    return rows, hidden, dtype, impls


def parse_cases(text: str) -> list[tuple[str, torch.dtype, int, int]]:
    """ "rms_norm:float32:128x4096,..." -> [(op, dtype, rows, hidden), ...]; an argparse
    type (the shape parsed by ncu_target.parse_shapes, the dtype one gpu_sweep.py times), so
    a bad case is a usage error."""
    cases = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 3 or parts[0] not in OPS or parts[1] not in SWEEP_DTYPES:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not OP:DTYPE:ROWSxHIDDEN (ops {', '.join(OPS)}; "
                f"dtypes {', '.join(SWEEP_DTYPES)})"
            )
        op, dtype, shape = parts
        ((rows, hidden),) = parse_shapes(shape)
        cases.append((op, getattr(torch, dtype), rows, hidden))
    return cases


def add_graph_probe_args(parser: argparse.ArgumentParser, cases: str, impls: str) -> None:
    """--cases OP:DTYPE:ROWSxHIDDEN,... (parse_cases) and --impls for the graph probes, with
    each probe's defaults; its --impls is checked with gpu_sweep.choices against
    KNOWN_IMPLS."""
    parser.add_argument("--cases", type=parse_cases, default=cases, help="OP:DTYPE:ROWSxHIDDEN,...")
    parser.add_argument("--impls", default=impls, help=",".join(KNOWN_IMPLS))
