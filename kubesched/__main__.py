"""``python -m kubesched``: the same command line as the ``kubesched`` console script."""

import sys

from kubesched.app.cli import main

sys.exit(main())
