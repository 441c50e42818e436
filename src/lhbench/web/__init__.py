"""The web app: overview, per-task matrix, runs, judges, compare, and the preference arena."""

from lhbench.web.app import create_app
from lhbench.web.auth import add_user

__all__ = ["add_user", "create_app"]
