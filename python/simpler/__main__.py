"""``python -m simpler``: the command line (simpler/cli.py, docs/cli.md)."""
import sys

from simpler.cli import main

sys.exit(main())
