#!/usr/bin/env python3
"""The declared rust-version holds for the lock: every package the lock resolves (every
feature, every target, dev-dependencies too) declares a rust-version at or below the
workspace's. Cargo's resolver "3" picks such versions for users; this check sees that the lock
the tests run with did too (a `cargo update` without it could pull a newer one). A package
that declares none cannot be checked: they are counted, and the build with the declared
toolchain (`.ci/run`, lane B) covers the published crates. With `--toolchain`, prints that
toolchain's name and checks nothing."""

import json
import subprocess
import sys
import tomllib


def version(text):
    return tuple(int(part) for part in (text.split(".") + ["0", "0"])[:3])


with open("Cargo.toml", "rb") as manifest:
    declared = tomllib.load(manifest)["workspace"]["package"]["rust-version"]
if sys.argv[1:] == ["--toolchain"]:
    # The rustup toolchain of that version (`1.86` -> `1.86.0`), for `.ci/common.sh`.
    print(declared if declared.count(".") == 2 else declared + ".0")
    sys.exit(0)
meta = json.loads(
    subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"]
    )
)
resolved = {node["id"] for node in meta["resolve"]["nodes"]}
packages = [p for p in meta["packages"] if p["id"] in resolved]
above = [
    f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
    for p in packages
    if p.get("rust_version") and version(p["rust_version"]) > version(declared)
]
silent = sum(1 for p in packages if not p.get("rust_version"))
if above:
    print(f"rust-version is {declared}, but the lock holds:", *above, sep="\n  ")
    print(
        "pick older versions (`cargo update -p NAME --precise VERSION`; resolver 3 does so "
        "for what allows it) or raise rust-version in Cargo.toml and the README"
    )
    sys.exit(1)
print(
    f"msrv: {len(packages)} locked packages, none above Rust {declared} "
    f"({silent} declare no rust-version)"
)
