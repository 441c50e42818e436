"""``python -m lhbench`` runs the CLI."""

from lhbench.cli import main

main()
