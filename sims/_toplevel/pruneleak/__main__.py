"""``python -m pruneleak``: the ``pruneleak`` command line."""

import sys

from pruneleak.sims.cli import main

if __name__ == "__main__":
    sys.exit(main())
