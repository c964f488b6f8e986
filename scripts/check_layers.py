#!/usr/bin/env python3
"""Checks that Kiln's layers depend one way (docs/architecture.md, "Layers").

A source file under src/<layer>/ may include the private headers of its own layer and of
the layers below it, never of a layer above; the public headers (include/kiln/) never
include private ones, and neither does the renderer (render/, built only on the public
API); only the LLVM backend includes LLVM's C API. Run by ctest
(`layering`); before checking the tree it checks itself on a tree with a deliberate
violation, so a checker that stopped seeing includes fails too.

usage: check_layers.py [source root]
"""
import pathlib
import re
import sys
import tempfile

# Bottom to top: the order data and calls flow in (front end -> IR -> form -> backend /
# cache -> driver), then the subsystems built on the driver.
LAYERS = ["util", "memory", "ir", "form", "backend", "cache", "eval", "ad", "tensor", "control"]

# Headers of outside libraries that only one directory may include.
CONFINED = {"llvm-c/": "src/backend/llvm/"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
SOURCE_SUFFIXES = {".h", ".cpp", ".inl"}


def sources(root, directory):
    base = root / directory
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.suffix in SOURCE_SUFFIXES)


def violations(root):
    """Returns one line per include that breaks a rule."""
    rank = {layer: position for position, layer in enumerate(LAYERS)}
    found = []
    for path in sources(root, "src"):
        relative = path.relative_to(root).as_posix()
        layer = relative.split("/")[1]
        if layer not in rank:
            found.append(f"{relative}: directory src/{layer}/ is not in the layer list (scripts/check_layers.py)")
            continue
        for kind, header in INCLUDE.findall(path.read_text()):
            target = header.split("/")[0]
            if kind == '"' and target in rank and rank[target] > rank[layer]:
                found.append(f"{relative}: includes \"{header}\" of layer {target}/, "
                             f"which is above {layer}/")
    for directory in ("include", "python/src", "render"):
        for path in sources(root, directory):
            for kind, header in INCLUDE.findall(path.read_text()):
                if kind == '"' and header.split("/")[0] in rank:
                    found.append(f"{path.relative_to(root).as_posix()}: includes private header \"{header}\"")
    for directory in ("src", "include", "python/src", "render"):
        for path in sources(root, directory):
            relative = path.relative_to(root).as_posix()
            for _, header in INCLUDE.findall(path.read_text()):
                for prefix, home in CONFINED.items():
                    if header.startswith(prefix) and not relative.startswith(home):
                        found.append(f"{relative}: includes <{header}>, which only {home} may include")
    return found


def self_test():
    """The checker must see a lower layer including a higher one's header."""
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / "src/ir").mkdir(parents=True)
        (root / "src/eval").mkdir(parents=True)
        (root / "src/eval/evaluate.h").write_text("#pragma once\n")
        (root / "src/ir/trace.cpp").write_text('#include "ir/node.h"\n#include "eval/evaluate.h"\n')
        found = violations(root)
        return len(found) == 1 and "src/ir/trace.cpp" in found[0] and "eval/" in found[0]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    if not self_test():
        print("check_layers.py: the self-test missed a deliberate violation")
        return 1
    found = violations(root.resolve())
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) break the layering; see docs/architecture.md")
        return 1
    print(f"layers one way: {' < '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
