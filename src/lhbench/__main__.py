"""``python -m lhbench`` runs the CLI.

``-m`` puts the current directory first on ``sys.path``: a directory holding a package's
``*.dist-info`` (a plugin's entry points) or a module named like a dependency would then
be loaded by whoever runs lhbench there. That entry is dropped before anything else is
imported (the ``lhbench`` console script never adds it).
"""

import os
import sys

if not sys.flags.safe_path and sys.path:
    _here = {"", ".", os.getcwd()}
    if sys.path[0] in _here:
        del sys.path[0]

from lhbench.cli import main

main()
