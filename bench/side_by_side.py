#!/usr/bin/env python3
"""Puts the platform benchmarks of two runs side by side.

    bench/side_by_side.py BEFORE.md AFTER.md [--before-name A] [--after-name B]

Each file is a docs/benchmarks.md that bench/run.sh wrote (two checkouts,
each with its own build, run one after the other on the same machine). For
every table of the platform section (between the "platform benchmarks"
markers) the rows of both runs are matched on their text columns, and each
number is printed as "before → after" with the after/before ratio, as a
Markdown table.
"""
import argparse
import re
import sys

BEGIN = "<!-- platform benchmarks: begin"
END = "<!-- platform benchmarks: end -->"
NUMBER = re.compile(r"^-?[0-9][0-9,]*(\.[0-9]+)?(×|x| ms)?$")


def platform_section(path):
    text = open(path, encoding="utf-8").read()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        sys.exit(f"side_by_side: {path} has no platform benchmarks section")
    return text[start:end]


def tables(section):
    """[(heading, header cells, [row cells])] of each Markdown table."""
    found, heading, rows = [], "", None
    for line in section.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if rows is None:
                rows = [cells]
            elif not all(set(c) <= set("-: ") for c in cells):
                rows.append(cells)
        elif rows is not None:
            found.append((heading, rows[0], rows[1:]))
            rows = None
    if rows is not None:
        found.append((heading, rows[0], rows[1:]))
    return found


def is_number(cell):
    return bool(NUMBER.match(cell))


def value(cell):
    return float(re.sub(r"[^0-9.\-]", "", cell))


# Columns that say which row it is even though they hold numbers.
KEY_COLUMNS = {"connections", "size", "pending"}


def key_of(header, row):
    return tuple(c for h, c in zip(header, row) if h in KEY_COLUMNS or not is_number(c))


def side_by_side(before, after, names):
    out = []
    for (heading, header, old_rows), (_, new_header, new_rows) in zip(before, after):
        if header != new_header:
            out.append(f"{heading}: the two runs' tables differ ({header} / {new_header})\n")
            continue
        old_by_key = {key_of(header, r): r for r in old_rows}
        out.append(f"### {heading}\n")
        out.append(f"Each figure: {names[0]} → {names[1]} (after / before).\n")
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + " --- |" * len(header))
        for row in new_rows:
            old = old_by_key.get(key_of(header, row))
            cells = []
            for i, cell in enumerate(row):
                if (old is None or i >= len(old) or header[i] in KEY_COLUMNS or not is_number(cell)
                        or not is_number(old[i])):
                    cells.append(cell)
                    continue
                before_value, after_value = value(old[i]), value(cell)
                ratio = f" ({after_value / before_value:.2f})" if before_value else ""
                cells.append(f"{old[i]} → {cell}{ratio}")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--before-name", default="before")
    parser.add_argument("--after-name", default="after")
    args = parser.parse_args()
    before = tables(platform_section(args.before))
    after = tables(platform_section(args.after))
    print(side_by_side(before, after, (args.before_name, args.after_name)))


if __name__ == "__main__":
    main()
