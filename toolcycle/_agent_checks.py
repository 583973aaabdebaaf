"""Moved to :mod:`toolcycle.agent.checks` (the agent package holds its checks); kept so that
old imports go on working, with a ``DeprecationWarning``."""

import warnings

from .agent.checks import check_limits, check_model_settings, check_tools

__all__ = ["check_limits", "check_model_settings", "check_tools"]

warnings.warn("toolcycle._agent_checks moved to toolcycle.agent.checks", DeprecationWarning,
              stacklevel=2)
