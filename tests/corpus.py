"""Where the conformance corpus lives: ``$KUBESCHED_CONFORMANCE_DIR``, else ``../shared/conformance``.

Every test that reads the corpus takes its location from here, so a checkout anywhere (CI clones
beside ``shared/``) finds it, and tests skip with a clear reason where it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

CORPUS = Path(
    os.environ.get("KUBESCHED_CONFORMANCE_DIR", Path(__file__).resolve().parents[2] / "shared" / "conformance")
)
