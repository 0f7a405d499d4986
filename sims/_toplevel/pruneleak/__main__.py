"""``python -m pruneleak``: the ``pruneleak`` command line."""

import sys

from sims.cli import main

if __name__ == "__main__":
    sys.exit(main())
