import sys

from pruneleak.sims.cli import main

sys.exit(main())
