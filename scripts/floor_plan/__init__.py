"""The code behind `scripts/figures`: the floor plan's figures, read from the code as text."""

import os
import re

# The checkout measured: this one, or the one `scripts/figures --root DIR` names.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rel(path):
    """A path as the table shows it: from the checkout's root."""
    return os.path.relpath(path, ROOT)


def natural(s):
    """A sort key that puts `a.rs:9` before `a.rs:10`."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]
