"""Deprecated path: this module moved to :mod:`toolcycle.agent.task_input`.

Importing ``toolcycle.task_input`` still works (the same names, the same
objects) and warns with a ``DeprecationWarning``; the path goes in a later release
(toolcycle._public_api, CHANGELOG.md).
"""

from toolcycle._public_api import warn_moved
from toolcycle.agent.task_input import *  # noqa: F403  (the moved module's public names)

warn_moved(__name__)
