#!/usr/bin/env python3
"""The house rules CI checks (issue 29): no import cycle between the files of a crate, imports
that run down the runtime's layers, and no source file over 400 lines (test modules aside).

An import is any `crate::a::b` or `super::b` path in a file (a `use`, or a path written inline);
it points at the longest module path that exists. `mod x;` declarations are not imports.

    python3 .ci/house.py            # the whole workspace
"""
import os
import re
import sys

MAX_LINES = 400
CRATES = ["seqgen/src", "seqgen-core/src", "seqgen-derive/src", "seqgen-cli/src", "examples/src"]

# seqgen's layers, top to bottom: a file may import its own layer's modules (no cycle) and the
# layers below, never one above. Modules not listed are leaves (the bottom layer).
LAYERS = [
    ["", "insert", "nonblocking", "global", "admin", "guide", "migrations", "sequence", "ledger",
     "transaction", "pending"],
    ["model"],
    ["generator"],
    ["cache", "reserve"],
    ["driver"],
    ["backend"],
]
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


def imports(mods, mod, path):
    here = mod.split("/") if mod else []
    found = set()
    text = without_tests(open(path).read())
    # A module's own children, reached by relative paths (`use window::Window`).
    for child in re.findall(r"^\s*(?:pub(?:\([\w:]+\))? )?mod (\w+);", text, re.M):
        target = "/".join(here + [child])
        if target in mods and re.search(r"(?<!::)\b" + child + r"::", text):
            found.add(target)
    for kind, rest in re.findall(r"\b(crate|super)((?:::\w+)+)", text):
        parts = rest.split("::")[1:]
        if kind == "super":
            parts = here[:-1] + parts
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
        graph = {m: imports(mods, m, p) for m, p in mods.items()}
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
        for m, p in mods.items():
            lines = without_tests(open(p).read()).count("\n")
            if lines > MAX_LINES:
                problems.append(f"{p}: {lines} lines (at most {MAX_LINES}, test modules aside)")
    for line in problems:
        print(line)
    if problems:
        sys.exit(1)
    print("house: no import cycle, imports run down the layers, no file over 400 lines")


if __name__ == "__main__":
    main()
