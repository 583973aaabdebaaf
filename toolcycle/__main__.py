"""``python -m toolcycle`` runs the command line."""

import sys

from toolcycle.cli import main

sys.exit(main())
