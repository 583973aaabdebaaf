"""Deprecated path: this module moved to :mod:`toolcycle.agent.stream`.

Importing ``toolcycle.agent_stream`` still works (the same names, the same
objects) and warns with a ``DeprecationWarning``; the path goes in a later release
(toolcycle._public_api, CHANGELOG.md).
"""

from toolcycle._public_api import warn_moved
from toolcycle.agent.stream import *  # noqa: F403  (the moved module's public names)

warn_moved(__name__)
