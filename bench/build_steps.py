#!/usr/bin/env python3
"""The slowest steps of a Ninja build, from its .ninja_log.

    bench/build_steps.py [BUILD_DIR] [--top N] [--markdown]

BUILD_DIR defaults to build/. Prints the N slowest steps (default 20) with
their seconds, then the number of steps, their summed seconds (about the CPU
time of a build whose steps each use one core) and the build's wall time
(first start to last end). Only the latest run of each step counts, so after
an incremental build the figures are of the whole tree as it stands.
"""
import argparse
import os
import sys


def read_steps(path):
    """(seconds, output) of every step, the latest run of each."""
    latest = {}
    with open(path, encoding="utf-8") as log:
        header = log.readline()
        if not header.startswith("# ninja log v"):
            sys.exit(f"build_steps: {path} is not a .ninja_log")
        for line in log:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                continue
            start, end, _mtime, output, command_hash = fields
            latest[output] = (int(start), int(end), command_hash)
    # A step with several outputs appears once per output; count it once.
    steps = {}
    for output, (start, end, command_hash) in latest.items():
        key = (start, end, command_hash)
        if key not in steps or output < steps[key]:
            steps[key] = output
    return [((end - start) / 1000.0, start, end, output) for (start, end, _), output in steps.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", nargs="?", default="build")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    args = parser.parse_args()

    path = os.path.join(args.build_dir, ".ninja_log")
    if not os.path.exists(path):
        sys.exit(f"build_steps: no {path} (build with Ninja first)")
    steps = read_steps(path)
    if not steps:
        sys.exit(f"build_steps: {path} has no steps")
    steps.sort(key=lambda s: s[0], reverse=True)

    if args.markdown:
        print("| s | step |")
        print("| ---: | --- |")
    for seconds, _start, _end, output in steps[: args.top]:
        print(f"| {seconds:.1f} | `{output}` |" if args.markdown else f"{seconds:8.1f}  {output}")
    total = sum(s[0] for s in steps)
    wall = (max(s[2] for s in steps) - min(s[1] for s in steps)) / 1000.0
    print()
    print(f"{len(steps)} steps, {total / 60:.1f} min summed, {wall / 60:.1f} min wall")


if __name__ == "__main__":
    main()
