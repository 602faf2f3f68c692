"""A crate's module tree, the paths each module names, and what they resolve to: the file-level
import graph, its circles, and the imports through a crate root's re-exports."""

import os
import re
import sys

from . import natural, rel
from .rust_text import DEF_KINDS, IDENT, blank, line_of, matching, use_trees

TEST_ATTR = re.compile(r"#\[cfg\((?:all\(\s*)?test\b[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*"
                       r"(?:pub(?:\s*\([^)]*\))?\s+)?$")


class Module:
    def __init__(self, path, file, text, span):
        self.path = path  # tuple of segment names from the crate root
        self.file = file  # the file that holds it (an inline module: its parent's file)
        self.text = text  # the blanked text of that file
        self.span = span  # (start, end) of the module's body in that text
        self.children = {}
        self.own = None  # body(), once computed
        self.test = False  # declared under `#[cfg(test)]`: left out of the figures


class Crate:
    def __init__(self, name, member, roots):
        self.name = name
        self.member = member
        self.trees = []  # one root Module per target (lib, main, bins)
        self.files = {}  # file -> blanked text
        for root in roots:
            self.trees.append(self.load(root, (), os.path.dirname(root), True))

    def load(self, file, path, folder, owns_folder):
        if file not in self.files:
            with open(file, encoding="utf-8", errors="replace") as f:
                self.files[file] = blank(f.read())
        text = self.files[file]
        module = Module(path, file, text, (0, len(text)))
        child_folder = folder if owns_folder else os.path.join(folder, path[-1])
        self.children(module, 0, len(text), child_folder)
        return module

    def children(self, module, start, end, folder):
        text = module.text
        pos = start
        decl = re.compile(r"(?:#\[path\s*=\s*\"[^\"]*\"\]\s*)?(?<![A-Za-z0-9_])"
                          r"(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])")
        while True:
            m = decl.search(text, pos, end)
            if not m:
                return
            name = m.group(1)
            is_test = bool(TEST_ATTR.search(text[max(0, m.start() - 300):m.start()]))
            if m.group(2) == "{":
                close = matching(text, m.end() - 1)
                child = Module(module.path + (name,), module.file, text, (m.end(), close - 1))
                self.children(child, m.end(), close - 1, os.path.join(folder, name))
                module.children[name] = child
                child.test = is_test
                pos = close
                continue
            pos = m.end()
            with open(module.file, encoding="utf-8", errors="replace") as f:
                original = f.read()
            attr = re.search(r"#\[path\s*=\s*\"([^\"]*)\"\]\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+"
                             + name + r"\s*;", original)
            candidates = ([os.path.join(folder, attr.group(1))] if attr else
                          [os.path.join(folder, name + ".rs"),
                           os.path.join(folder, name, "mod.rs")])
            for file in candidates:
                if os.path.isfile(file):
                    owns = os.path.basename(file) == "mod.rs"
                    module.children[name] = self.load(
                        file, module.path + (name,), os.path.dirname(file) if owns else folder,
                        owns)
                    module.children[name].test = is_test
                    break


def modules_of(tree):
    """The module and those below it, less the test modules."""
    if tree.test:
        return
    yield tree
    for child in tree.children.values():
        yield from modules_of(child)


def find_module(tree, segs):
    """The deepest module named by a prefix of `segs`, and how many segments it took."""
    module, k = tree, 0
    while k < len(segs) and segs[k] in module.children:
        module, k = module.children[segs[k]], k + 1
    return module, k


def body(module):
    """The module's own text: its span less the inline child modules inside it."""
    if module.own is not None:
        return module.own
    text = module.text[module.span[0]:module.span[1]]
    for child in module.children.values():
        if child.file == module.file:
            a, b = child.span[0] - module.span[0], child.span[1] - module.span[0]
            text = text[:a] + " " * (b - a) + text[b:]
    module.own = text
    return text


def defines(module, name):
    return re.search(r"(?<![A-Za-z0-9_])(?:" + DEF_KINDS + r"\s+" + re.escape(name)
                     + r"\b|macro_rules!\s*" + re.escape(name) + r"\b)", body(module))


def reexports(module):
    """(name, target segments relative to the module) of each `pub use` in the module."""
    own = body(module)
    for _, is_pub, leaves in use_trees(own):
        if is_pub:
            for segs, alias, _ in leaves:
                yield (alias or segs[-1]), segs


def absolute(tree, module, segs):
    """A path as written in `module`, from the crate root; None when it leaves the crate."""
    if not segs:
        return None
    path = list(module.path)
    head = segs[0]
    if head == "crate":
        return segs[1:]
    if head in ("self", "super"):
        while segs and segs[0] in ("self", "super"):
            if segs[0] == "super":
                path = path[:-1]
            segs = segs[1:]
        return path + segs
    if head in module.children:
        return path + segs
    return None


def resolve(tree, segs, seen=()):
    """The module that defines what the absolute path `segs` names (following re-exports);
    None for another crate's item that a module of this one re-exports."""
    module, k = find_module(tree, segs)
    if k == len(segs) or defines(module, segs[k]):
        return module
    key = (tuple(segs), module.file)
    if key in seen:
        return module
    seen = seen + (key,)
    for name, target in reexports(module):
        if name == segs[k] and target[-1] != "*":
            full = absolute(tree, module, target)
            if full is None:  # an item of another crate, handed on: no file of this one
                return None
            return resolve(tree, full + segs[k + 1:], seen)
    for name, target in reexports(module):
        if target[-1] == "*":
            full = absolute(tree, module, target[:-1])
            if full is not None:
                inner, j = find_module(tree, full)
                if j == len(full) and (defines(inner, segs[k]) or any(
                        n == segs[k] for n, _ in reexports(inner))):
                    return resolve(tree, full + segs[k:], seen)
    return module


INLINE = re.compile(r"(?<![A-Za-z0-9_:$])((?:crate|super|self)(?:\s*::\s*" + IDENT + r")+)")


def paths_in(module):
    """(segments as written, offset) of each path in the module's own text."""
    own = body(module)
    start = module.span[0]
    used = []
    for ustart, is_pub, leaves in use_trees(own):
        end = own.find(";", ustart)
        used.append((ustart, end))
        if is_pub:  # a re-export is the module's face, not an import of its code
            continue
        for segs, _, off in leaves:
            if segs and segs[-1] == "*":
                segs = segs[:-1]
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            yield segs, start + off
    for m in INLINE.finditer(own):
        if any(a <= m.start() < b for a, b in used):
            continue
        segs = [s for s in re.sub(r"\s", "", m.group(1)).split("::") if s]
        yield segs, start + m.start()


def arrows(crate, why=None):
    """{file: {files it imports}} within the crate; `why` collects {(a, b): {paths}}."""
    graph = {}
    for tree in crate.trees:
        for module in modules_of(tree):
            out = graph.setdefault(module.file, set())
            for segs, off in paths_in(module):
                full = absolute(tree, module, segs)
                if not full:
                    continue
                target = resolve(tree, full)
                if target is not None and target.file != module.file:
                    out.add(target.file)
                    if why is not None:
                        where = f"{'::'.join(segs)} (line {line_of(module.text, off)})"
                        why.setdefault((module.file, target.file), set()).add(where)
    return graph


def root_imports(crate):
    """'file:line' of each `crate::Name` outside the root that the root only re-exports."""
    found = []
    for tree in crate.trees:
        for module in modules_of(tree):
            if module.file == tree.file:
                continue
            for segs, off in paths_in(module):
                if len(segs) < 2 or segs[0] != "crate":
                    continue
                name = segs[1]
                rest = module.text[off:off + 400]
                macro = re.match(r"crate\s*::\s*" + name + r"\s*!", rest)
                if name in tree.children or defines(tree, name) or macro:
                    continue
                exported_macro = r"macro_rules!\s*" + re.escape(name) + r"\b"
                if any(re.search(exported_macro, body(m)) for m in modules_of(tree)):
                    continue
                found.append(f"{rel(module.file)}:{line_of(module.text, off)}")
    return sorted(set(found), key=natural)


def circles(graph):
    """Strongly connected components of two files or more (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(rel(f) for f in scc))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)
