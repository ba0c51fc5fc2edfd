"""`python -m kg` runs the kg command line."""

import sys

from kg.cli import main

sys.exit(main())
