#!/usr/bin/env python3
"""The house rules CI checks (issue 29): no import cycle between the files of a crate, imports
that run down the runtime's layers, no two files of the runtime with one name (`mod.rs` aside),
no source file over 400 lines (test modules aside), and no `macro_rules!` in `seqgen/src/backend/`
but the three it lists.

An import is any `crate::a::b` or `super::b` path in a file (a `use`, a group `crate::{a, b}`,
or a path written inline); it points at the longest module path that exists. A name the crate
root re-exports (`crate::Generator`, from `pub use generator::Generator;` in `lib.rs`) points at
the module it comes from, not at the root. `mod x;` declarations are not imports.

    python3 .ci/house.py            # the whole workspace
"""
import os
import re
import sys

MAX_LINES = 400
CRATES = ["seqgen/src", "seqgen-core/src", "seqgen-derive/src", "seqgen-cli/src", "examples/src", "tools/src"]

# seqgen's layers, top to bottom: a file may import its own layer's modules (no cycle) and the
# layers below, never one above. Modules not listed are leaves (the bottom layer).
LAYERS = [
    ["", "generator", "insert", "nonblocking", "global", "admin", "guide", "migrations",
     "sequence", "ledger", "transaction", "pending"],
    ["model"],
    ["engine"],
    ["cache", "reserve"],
    ["driver"],
    ["backend"],
]
# The only `macro_rules!` `seqgen/src/backend/` keeps (issue 55: each statement is ordinary code
# over a runner; ARCHITECTURE.md, "One statement, one function", says why these stay).
BACKEND_MACROS = {"admin_queries", "row_values_tuples", "row_values_up_to"}
# Pairs that must not import each other even on one layer.
APART = [("cache", "reserve")]


def modules(root):
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name.endswith(".rs"):
                path = os.path.join(directory, name)
                rel = os.path.relpath(path, root)[:-3]
                if rel.endswith("/mod"):
                    rel = rel[: -len("/mod")]
                found["" if rel in ("lib", "main") else rel] = path
    return found


def without_tests(text):
    """The file up to its `#[cfg(test)] mod tests`, comments removed."""
    text = re.split(r"\n#\[cfg\((?:all\()?test[^\n]*\]\s*\n(?:pub\(crate\) )?mod \w+ \{", text)[0]
    return re.sub(r"//[^\n]*", "", text)


def reexports(mods):
    """The names the crate root re-exports, by the module each comes from (`pub use a::b::C;`,
    `pub use a::{B, C as D};`)."""
    root = mods.get("")
    found = {}
    if root is None:
        return found
    text = without_tests(open(root).read())
    for path, group in re.findall(r"\bpub(?:\([\w:]+\))? use ((?:\w+::)*\w+)(?:::\{([^}]*)\})?;", text):
        items = [(path + "::" + i.strip()) for i in group.split(",") if i.strip()] if group else [path]
        for item in items:
            parts = item.split(" as ")
            name = parts[-1].strip().split("::")[-1]
            segments = parts[0].strip().split("::")
            for end in range(len(segments), 0, -1):
                target = "/".join(segments[:end])
                if target in mods:
                    found[name] = target
                    break
    return found


def imports(mods, mod, path, exported=None):
    here = mod.split("/") if mod else []
    found = set()
    exported = exported or {}
    text = without_tests(open(path).read())
    # Groups: `crate::{a::B, C}` is `crate::a::B` and `crate::C`.
    text = re.sub(
        r"\b(crate|super)::\{([^{}]*)\}",
        lambda m: " ".join(m.group(1) + "::" + i.strip() for i in m.group(2).split(",") if i.strip()),
        text,
    )
    # A module's own children, reached by relative paths (`use window::Window`).
    for child in re.findall(r"^\s*(?:pub(?:\([\w:]+\))? )?mod (\w+);", text, re.M):
        target = "/".join(here + [child])
        if target in mods and re.search(r"(?<!::)\b" + child + r"::", text):
            found.add(target)
    for kind, rest in re.findall(r"\b(crate|super)((?:::\w+)+)", text):
        parts = rest.split("::")[1:]
        if kind == "super":
            parts = here[:-1] + parts
        elif parts[0] in exported and parts[0] not in mods:
            parts = exported[parts[0]].split("/") + parts[1:]
        for end in range(len(parts), 0, -1):
            target = "/".join(parts[:end])
            if target in mods:
                if target != mod and not mod.startswith(target + "/"):
                    found.add(target)
                break
    return found


def cycles(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def layer(mod):
    top = mod.split("/")[0]
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return len(LAYERS)


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    problems = []
    for root in CRATES:
        mods = modules(root)
        exported = reexports(mods)
        graph = {m: imports(mods, m, p, exported) for m, p in mods.items()}
        for comp in cycles(graph):
            problems.append(f"{root}: import cycle between " + ", ".join(m or "lib" for m in comp))
            for m in comp:
                problems.append(f"    {m or 'lib'} -> {', '.join(sorted(graph[m] & set(comp)))}")
        if root == "seqgen/src":
            for m, targets in sorted(graph.items()):
                for t in sorted(targets):
                    if layer(t) < layer(m) and m.split("/")[0] != t.split("/")[0]:
                        problems.append(f"{root}: {m} imports {t}, a layer above it")
                    pair = (m.split("/")[0], t.split("/")[0])
                    if pair in APART or pair[::-1] in APART:
                        problems.append(f"{root}: {m} imports {t}; those two never import each other")
        if root == "seqgen/src":
            names = {}
            for p in mods.values():
                name = os.path.basename(p)
                if name not in ("mod.rs", "lib.rs"):
                    names.setdefault(name, []).append(p)
            for name, paths in sorted(names.items()):
                if len(paths) > 1:
                    problems.append(f"{root}: {len(paths)} files named {name}: " + ", ".join(sorted(paths)))
        if root == "seqgen/src":
            found = {}
            for m, p in mods.items():
                if m.split("/")[0] == "backend":
                    for name in re.findall(r"macro_rules!\s*(\w+)", open(p).read()):
                        found.setdefault(name, []).append(p)
            for name, paths in sorted(found.items()):
                if name not in BACKEND_MACROS:
                    problems.append(f"{paths[0]}: macro_rules! {name}: backend/ keeps only "
                                    + ", ".join(sorted(BACKEND_MACROS)) + " (write a statement as a function over a Runner)")
        for m, p in mods.items():
            lines = without_tests(open(p).read()).count("\n")
            if lines > MAX_LINES:
                problems.append(f"{p}: {lines} lines (at most {MAX_LINES}, test modules aside)")
    for line in problems:
        print(line)
    if problems:
        sys.exit(1)
    print("house: no import cycle, imports run down the layers, no file over 400 lines, "
          f"backend/'s macros {len(BACKEND_MACROS)} at most")


if __name__ == "__main__":
    main()
