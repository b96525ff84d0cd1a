"""The command line of the one-shape probes (graph_dram_probe.py, output_offset_probe.py):
--op, --dtype, one --shape and --impls, checked the same way in both."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from ncu_target import DTYPES, parse_shapes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
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
