"""`python -m cassperf.cli ...`: the same as the `cassperf` command."""

import sys

from cassperf.cli import main

sys.exit(main())
