import sys

from toolcycle.cli import main

sys.exit(main())
