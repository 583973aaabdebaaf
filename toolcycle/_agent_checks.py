"""Moved to :mod:`toolcycle.agent.checks` (the agent package holds its checks); kept so that
old imports go on working, with a ``DeprecationWarning``."""

import warnings

from .agent.checks import *  # noqa: F403
from .agent.checks import check_limits as check_limits

warnings.warn("toolcycle._agent_checks moved to toolcycle.agent.checks", DeprecationWarning,
              stacklevel=2)
