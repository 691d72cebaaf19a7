#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_archive into the folder given: small tars
(fuzz_archive gzips its input) with the entries a model definition holds and
the ones the extractor must refuse, plus one already gzipped. Run at build
time so that no binary seeds are committed. Deterministic: fixed times and
owners, so the same script gives the same bytes."""
import gzip
import io
import os
import sys
import tarfile


def entry(name, kind=tarfile.REGTYPE, data=b"", link="", mode=0o644):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = 0
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


def tar(entries, fmt=tarfile.PAX_FORMAT):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as t:
        for info, data in entries:
            t.addfile(info, io.BytesIO(data) if info.type == tarfile.REGTYPE else None)
    return out.getvalue()


D, F, L, H = tarfile.DIRTYPE, tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
SEEDS = {
    "model": [entry("./", D), entry("run.sh", F, b"#!/bin/sh\necho hi\n", mode=0o755),
              entry("src", D), entry("src/train.py", F, b"print(1)\n"), entry(".ringignore", F, b"*.ckpt\n")],
    "links_inside": [entry("data", D), entry("data/x.csv", F, b"1,2\n"), entry("latest", L, link="data/x.csv"),
                     entry("d", L, link="data"), entry("copy.csv", H, link="data/x.csv")],
    "link_outside": [entry("up", L, link="../../etc")],
    "link_absolute": [entry("passwd", L, link="/etc/passwd")],
    "link_chain_out": [entry("x", D), entry("x/up", L, link=".."), entry("out", L, link="x/up/..")],
    "link_loop": [entry("a", L, link="b"), entry("b", L, link="a")],
    "write_through_link": [entry("d", L, link="."), entry("d/f", F, b"x")],
    "dotdot": [entry("../evil", F, b"x")],
    "absolute": [entry("/tmp/evil", F, b"x")],
    "twice": [entry("a", F, b"1"), entry("a", F, b"2")],
    "below_file": [entry("a", F, b"1"), entry("a/b", F, b"2")],
    "hardlink_missing": [entry("h", H, link="nothing")],
    "hardlink_outside": [entry("h", H, link="../x")],
    "fifo": [entry("p", tarfile.FIFOTYPE)],
    "gnu_longname": [entry("l" * 300 + "/f", F, b"x")],
    "ustar": [entry("dir", D), entry("dir/f.txt", F, b"hello\n")],
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, entries in SEEDS.items():
        fmt = {"gnu_longname": tarfile.GNU_FORMAT, "ustar": tarfile.USTAR_FORMAT}.get(name, tarfile.PAX_FORMAT)
        with open(os.path.join(out, name + ".tar"), "wb") as f:
            f.write(tar(entries, fmt))
    with open(os.path.join(out, "model.tar.gz"), "wb") as f:
        f.write(gzip.compress(tar(SEEDS["model"]), mtime=0))
    with open(os.path.join(out, "empty.tar"), "wb") as f:
        f.write(b"\0" * 1024)


if __name__ == "__main__":
    main()
