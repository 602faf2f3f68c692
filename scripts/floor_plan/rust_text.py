"""Reading Rust as text: comments and literals blanked, brackets matched, `use` trees flattened."""

import re

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
DEF_KINDS = r"(?:fn|struct|enum|trait|type|const|static|union|mod)"


def blank(text, strings=True):
    """The text with comments and (unless `strings` is false) string and char literals
    replaced by spaces, newlines kept, so line numbers and columns stay."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append(text[i:i + 1] + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + text[j - 1:j]
                       if strings else text[i:j])
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"' if strings
                       else text[i:j])
            i = j
        elif c == "'":
            m = re.match(r"'(\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\\n])'", text[i:i + 12])
            if m:
                out.append("' " + " " * (m.end() - 3) + "'" if strings else m.group(0))
                i += m.end()
            else:  # a lifetime or a label
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def matching(text, pos):
    """Index just past the bracket that closes the one at `pos`."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = []
    for j in range(pos, len(text)):
        c = text[j]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return j + 1
    return len(text)


def use_trees(text):
    """(start offset, is_pub, [(segments, alias, offset)]) for each `use` item."""
    for m in re.finditer(r"(?<![A-Za-z0-9_])(pub(?:\s*\([^)]*\))?\s+)?use\s", text):
        end = text.find(";", m.end())
        if end < 0:
            continue
        body = text[m.end():end]
        leaves = []
        expand(body, m.end(), [], leaves)
        yield m.start(), bool(m.group(1)), leaves


def expand(body, base, prefix, leaves):
    """Flatten a use tree `a::{b, c::d as e, f::*}` into leaves."""
    parts, depth, start = [], 0, 0
    for j, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append((start, body[start:j]))
            start = j + 1
    parts.append((start, body[start:]))
    for off, part in parts:
        if not part.strip():
            continue
        brace = part.find("{")
        if brace >= 0:
            head = [s for s in re.sub(r"\s", "", part[:brace]).split("::") if s]
            inner = part[brace + 1:part.rfind("}")]
            expand(inner, base + off + brace + 1, prefix + head, leaves)
            continue
        alias = None
        am = re.search(r"\sas\s+(" + IDENT + r")\s*$", part)
        if am:
            alias, part = am.group(1), part[:am.start()]
        segs = [s for s in re.sub(r"\s", "", part).split("::") if s]
        lead = len(part) - len(part.lstrip())
        leaves.append((prefix + segs, alias, base + off + lead))
