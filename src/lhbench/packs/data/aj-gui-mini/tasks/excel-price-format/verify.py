"""Label this task's final state: its checkers compare the document with the golden file."""
import sys
from pathlib import Path

from lhbench.office.checkers import verify_main

sys.exit(verify_main(Path(__file__).parent, sys.argv[1:]))
