"""``python -m scorebench.cli``."""

from . import main

main()
