"""How the kubelet updates a ConfigMap mounted as a directory (its AtomicWriter), for tests without one.

Each version of the data is written to a new hidden folder named after the time, a ``..data_tmp`` link
to it is renamed over ``..data`` (one atomic step: a reader sees the old files or the new ones, never a
mix), each key is a link ``key -> ..data/key`` made once, and the previous folder is removed. The file a
program opens keeps its path; what the path leads to changes under it.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

_versions = itertools.count(1)


def project(folder: Path, data: Mapping[str, str]) -> None:
    """Write ``data`` (key -> content) into ``folder`` as the kubelet projects a ConfigMap volume."""
    folder.mkdir(parents=True, exist_ok=True)
    data_link = folder / "..data"
    old = os.readlink(data_link) if data_link.is_symlink() else None
    version = f"..2026_01_01_00_00_00.{next(_versions):09d}"
    (folder / version).mkdir()
    for key, content in data.items():
        (folder / version / key).write_text(content)
    tmp_link = folder / "..data_tmp"
    os.symlink(version, tmp_link)
    os.rename(tmp_link, data_link)
    for key in data:
        if not (folder / key).is_symlink():
            os.symlink(f"..data/{key}", folder / key)
    if old is not None:
        shutil.rmtree(folder / old)
