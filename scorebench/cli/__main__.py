"""``python -m scorebench.cli``."""

from scorebench.cli import main

main()
