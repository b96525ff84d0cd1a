"""Command line: `python -m fusedops doctor [--json] [--verify]`."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusedops")
    commands = parser.add_subparsers(dest="command", required=True)
    doctor = commands.add_parser("doctor", help="check that this build fits torch and the GPUs")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument(
        "--verify",
        action="store_true",
        help="also check every installed file's sha256 and size against the wheel's RECORD",
    )
    args = parser.parse_args(argv)

    import fusedops
    from fusedops import doctor as doctor_module

    report = doctor_module.collect(load_error=fusedops._LOAD_ERROR, verify=args.verify)
    print(json.dumps(report, indent=2) if args.json else doctor_module.render(report))
    return 0 if report["verdict"] == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
