"""The web app: leaderboard, run transcripts, judge agreement, and the preference arena."""

from lhbench.web.app import create_app
from lhbench.web.auth import add_user

__all__ = ["add_user", "create_app"]
