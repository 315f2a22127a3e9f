"""Print the oldest release pyproject.toml allows of each core dependency, as pip constraints.

``.ci/run`` installs the core at exactly these and runs the core's tests, so a lower bound that no
longer holds fails CI instead of a user's install.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def lower_bounds(path: Path = PYPROJECT) -> list[str]:
    """``name==version`` for every core dependency written ``name>=version``."""
    project = tomllib.loads(path.read_text())["project"]
    pins = []
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*", requirement)
        if match is None:
            sys.exit(f"{path}: core dependency {requirement!r} has no plain lower bound")
        pins.append(f"{match[1]}=={match[2]}")
    return pins


if __name__ == "__main__":
    print("\n".join(lower_bounds()))
