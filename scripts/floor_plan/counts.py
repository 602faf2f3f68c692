"""The counted figures: lines, public items, error variants, repeated runs."""

import os
import re

from . import natural, rel
from .rust_text import IDENT, blank, matching

PUB_ITEM = re.compile(r"^\s*pub\s+(?:(?:async|unsafe|const|extern\s+\"C\")\s+)*"
                      r"(?:fn|struct|enum|trait|type|const|static|mod|use)\b")


ITEM_AFTER_ATTRS = re.compile(r"\s*(?:#\[[^\]]*(?:\[[^\]]*\][^\]]*)*\]\s*)*"
                              r"(?:pub(?:\s*\([^)]*\))?\s+)?(enum|struct)\s+(" + IDENT + r")[^{;]*")


def error_enums(crate):
    """(enum name, variant count, file) for each enum deriving `Error`."""
    out = []
    for file, text in crate.files.items():
        for m in re.finditer(r"#\[derive\(([^)]*)\)\]", text):
            if not re.search(r"(?<![A-Za-z0-9_])(?:thiserror\s*::\s*)?Error\b", m.group(1)):
                continue
            em = ITEM_AFTER_ATTRS.match(text, m.end())
            if not em or em.group(1) != "enum":
                continue
            brace = text.find("{", em.end() - 1)
            inner = text[brace + 1:matching(text, brace) - 1]
            out.append((em.group(2), variants(inner), rel(file)))
    return sorted(out, key=lambda t: (t[0], t[2]))


def variants(inner):
    """How many variants an enum's body holds: its top-level, comma-separated parts that
    start with a name once their attributes are taken off."""
    count, depth, part = 0, 0, []
    for c in inner + ",":
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            seg = "".join(part).strip()
            while seg.startswith("#["):
                seg = seg[matching(seg, 1):].strip()
            if re.match(IDENT, seg):
                count += 1
            part = []
        else:
            part.append(c)
    return count


MIN_RUN = 6  # lines a repeated run has at least
MOST_PLACES = 8  # a run found in more places is a common shape, not a copy
SKIPPED_LINE = re.compile(r"^(?:[\s{}()\[\];,]*|(?:pub(?:\([^)]*\))?\s+)?use\s.*|#\[.*\])$")


def repeats(crates):
    """Pairs of `src/` files that share a run of MIN_RUN or more lines: the same but for
    comments and runs of white space, leaving out blank lines, lone punctuation, attributes
    and `use` lines. Each pair once, with its first shared run, as
    (crate a, place a, crate b, place b)."""
    places = {}  # a run's text -> [(crate, file, first line, last line)]
    for crate in crates:
        for folder, _, names in os.walk(os.path.join(crate.member, "src")):
            for name in sorted(names):
                if not name.endswith(".rs"):
                    continue
                file = os.path.join(folder, name)
                with open(file, encoding="utf-8", errors="replace") as f:
                    lines = blank(f.read(), strings=False).split("\n")
                kept = [(n + 1, " ".join(line.split())) for n, line in enumerate(lines)
                        if not SKIPPED_LINE.match(line.strip())]
                for i in range(len(kept) - MIN_RUN + 1):
                    run = kept[i:i + MIN_RUN]
                    key = "\n".join(text for _, text in run)
                    places.setdefault(key, []).append((crate, file, run[0][0], run[-1][0]))
    pairs = {}
    for found in places.values():
        if not 2 <= len(found) <= MOST_PLACES:
            continue
        for i, one in enumerate(found):
            for other in found[i + 1:]:
                a, b = sorted((one, other), key=lambda p: (rel(p[1]), p[2]))
                if a[1] == b[1] and b[2] <= a[3]:
                    continue  # one run overlapping itself
                key = (a[1], b[1])
                if key not in pairs or (a[2], b[2]) < (pairs[key][1], pairs[key][3]):
                    pairs[key] = (a[0], a[2], b[0], b[2])
    return sorted(((ca, f"{rel(fa)}:{la}", cb, f"{rel(fb)}:{lb}")
                   for (fa, fb), (ca, la, cb, lb) in pairs.items()),
                  key=lambda p: (natural(p[1]), natural(p[3])))


def count_lines(crate):
    total = 0
    for folder, _, names in os.walk(os.path.join(crate.member, "src")):
        for name in names:
            if name.endswith(".rs"):
                with open(os.path.join(folder, name), "rb") as f:
                    total += f.read().count(b"\n")
    return total


def public_items(crate):
    total = 0
    for folder, _, names in os.walk(os.path.join(crate.member, "src")):
        for name in names:
            if name.endswith(".rs"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    total += sum(1 for line in f if PUB_ITEM.match(line))
    return total
