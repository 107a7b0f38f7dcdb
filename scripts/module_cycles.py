#!/usr/bin/env python3
"""Module edges of src/ (one module per file) and the pairs that import each other.

An edge a -> b is a `use` or a `crate::`/`super::` path in a's file (tests after `#[cfg(test)]`
left out) naming something in module b: the longest module prefix of the path, so an item
re-exported by a parent counts as an import of that parent. A module and its own descendants
are one unit for pairs (a child's `use super::*` is not a cycle). Prints every 2-cycle with the
paths that make it, then every longer cycle (a strongly connected set of modules, a parent's
use of its child counted), and the counts. Run from the repository root:

    python3 scripts/module_cycles.py [--edges]
"""

import re
import sys
from pathlib import Path

SRC = Path("src")


def module_of(path: Path) -> tuple:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts)


def strip(text: str) -> str:
    # Tests import their parent freely: only the module's own code counts.
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def expand(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^([^{]*)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, inner = m.groups()
    out, depth, start = [], 0, 0
    for i, c in enumerate(inner + ","):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            part = inner[start:i]
            start = i + 1
            if part:
                out += [prefix + p for p in expand(part)]
    return out


def resolve(mod: tuple, path: str, modules: set):
    segs = [s for s in re.split(r"::", re.sub(r"\bas\s+\w+$", "", path)) if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = mod
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    elif mod + (segs[0],) in modules:
        base = mod
    else:
        return None  # another crate, or a name in scope
    best = base
    for i in range(1, len(segs) + 1):
        cand = base + tuple(segs[:i])
        if cand in modules:
            best = cand
    return best


def main():
    # Test modules in their own files are tests too.
    files = [f for f in sorted(SRC.rglob("*.rs")) if "tests" not in module_of(f)]
    modules = {module_of(f) for f in files}
    edges = {}
    for f in files:
        mod = module_of(f)
        text = strip(f.read_text())
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += expand(m.group(1))
        paths += re.findall(r"\b(?:crate|super)(?:::\w+)+", text)
        for p in paths:
            to = resolve(mod, p.strip(), modules)
            if to is None or to == mod:
                continue
            # A child reaching up (`use super::*`) is how Rust nests modules, not a cycle; a
            # parent using its child's items is an edge (the parent depends on the child).
            if mod[: len(to)] == to:
                continue
            edges.setdefault((mod, to), set()).add(p.strip())
    name = lambda m: "crate::" + "::".join(m) if m else "crate"
    if "--edges" in sys.argv:
        for (a, b) in sorted(edges):
            print(f"{name(a)} -> {name(b)}")
    pairs = sorted((a, b) for (a, b) in edges if a < b and (b, a) in edges)
    # A parent and its own child both ways is the nesting again.
    pairs = [(a, b) for (a, b) in pairs if b[: len(a)] != a]
    for a, b in pairs:
        print(f"{name(a)} <-> {name(b)}")
        print(f"    {name(a)}: {', '.join(sorted(edges[(a, b)]))}")
        print(f"    {name(b)}: {', '.join(sorted(edges[(b, a)]))}")
    cycles = [c for c in sccs(edges) if len(c) > 2]
    for c in cycles:
        print(f"strongly connected, {len(c)} modules: " + ", ".join(name(m) for m in c))
    print(
        f"{len(pairs)} two-way pairs, {len(cycles)} longer cycles, "
        f"{len(edges)} edges, {len(modules)} modules"
    )


def sccs(edges):
    """Strongly connected components (Tarjan), each as its members sorted."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
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
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    main()
