"""``python -m pipeline index``: argument parsing and main."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .. import matrix
from ..gate.cli import OneLineParser, parse_or_status
from .files import Release, build_index, build_release_index
from .route import IndexBuildError

DESCRIPTION = "Per-variant PEP 503 indexes and per-torch find-links pages."


def _minors(text: str) -> list[str]:
    minors = text.replace(",", " ").split()
    for m in minors:
        try:
            ok = len(Version(m).release) == 2 and str(Version(m)) == m
        except InvalidVersion:
            ok = False
        if not ok:
            raise argparse.ArgumentTypeError(f"{m!r} is not a torch minor like 2.14")
    return minors


def _base_url(text: str) -> str:
    if re.search(r"[\s\"'<>]", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL prefix")
    return text


def _releases_url(text: str) -> str:
    if re.search(r"[\s\"'<>]", text) or "://" not in text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an absolute URL (https://..., file://...)"
        )
    return text.rstrip("/")


def _release(text: str) -> Release:
    try:
        return Release.parse(text)
    except IndexBuildError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


USAGE_FORMS = "give WHEEL_DIR OUT_DIR, or --release TAG=DIR ... OUT_DIR"


def _check_release_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--release form: the one positional is OUT_DIR; every release directory exists."""
    if args.releases_url is None:
        p.error("--release needs --releases-url (the URL the releases' files download from)")
    if args.base_url:
        p.error("--base-url and --release exclude each other (a release links at URL/TAG)")
    if args.wheel_dir is None or args.out_dir is not None:
        p.error("with --release give OUT_DIR only (the wheels come from each TAG=DIR)")
    args.out_dir, args.wheel_dir = args.wheel_dir, None
    seen: set[str] = set()
    for release in args.release:
        if release.tag in seen:
            p.error(f"--release {release.tag} given twice")
        seen.add(release.tag)
        if not release.wheel_dir.is_dir():
            p.error(f"--release {release.tag}={release.wheel_dir}: not a directory")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(prog="pipeline index", description=DESCRIPTION)
    p.add_argument("wheel_dir", type=Path, nargs="?", metavar="WHEEL_DIR", help="the wheels")
    p.add_argument("out_dir", type=Path, nargs="?", metavar="OUT_DIR", help="the index tree")
    p.add_argument(
        "--base-url", type=_base_url, default="", help="link wheels at URL/<file>, no copies"
    )
    p.add_argument(
        "--release",
        type=_release,
        action="append",
        default=[],
        metavar="TAG=DIR",
        help="a published release's wheels (repeat for every release); then give OUT_DIR only",
    )
    p.add_argument(
        "--releases-url",
        type=_releases_url,
        metavar="URL",
        help="each --release's wheels are linked at URL/TAG/<file>",
    )
    p.add_argument(
        "--torch-minors", type=_minors, help="minors for find-links pages (default: matrix)"
    )
    args = p.parse_args(argv)
    if args.release:
        _check_release_args(p, args)
    else:
        if args.releases_url is not None:
            p.error("--releases-url needs --release TAG=DIR")
        if args.wheel_dir is None or args.out_dir is None:
            p.error(USAGE_FORMS)
        if not args.wheel_dir.is_dir():
            p.error(f"WHEEL_DIR {args.wheel_dir} is not a directory")
    if args.out_dir.exists() and not args.out_dir.is_dir():
        p.error(f"OUT_DIR {args.out_dir} exists and is not a directory")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_or_status(parse_args, argv)
    if isinstance(args, int):
        return args
    try:
        if args.release:
            res = build_release_index(
                args.release,
                args.out_dir,
                releases_url=args.releases_url,
                torch_minors=args.torch_minors,
            )
        else:
            res = build_index(
                args.wheel_dir, args.out_dir, base_url=args.base_url, torch_minors=args.torch_minors
            )
        releases = f" from {len(args.release)} releases" if args.release else ""
        print(
            f"wrote {len(res.pages)} pages under {args.out_dir}{releases}"
            f" for {', '.join(res.variants)}"
            f" ({len(res.copied)} wheels copied, {len(res.unchanged)} unchanged)"
        )
    except (IndexBuildError, matrix.MatrixError) as exc:
        print(f"pipeline index: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"pipeline index: error: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 1
    return 0
