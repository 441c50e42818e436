"""lhbench: evaluate long-horizon agents on subjective work.

Runs harnesses on task packs, grades runs with rubric judge panels, programmatic
checks and pairwise human preference, and turns the grades into numbers users can act on.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
