"""Experiment (dev entries only): the further-calls request of the Hermes protocol made to
write at least one call (no "[]"), the calls then kept by the usual filter (each must carry a
value the first reply left out and repeat no call). Run as bench/bfcl_local.py is, same args.
"""

import dataclasses
import sys

import bfcl_local

from toolcycle.models.text import hermes
from toolcycle.models.text.further import ONLY_FURTHER

original = hermes.reply_grammar


def forced(tools, settings):  # type: ignore[no-untyped-def]
    if settings.extra.get(ONLY_FURTHER):
        extra = {k: v for k, v in settings.extra.items() if k != ONLY_FURTHER}
        settings = dataclasses.replace(settings, tool_choice="required", extra=extra)
    return original(tools, settings)


hermes.reply_grammar = forced
hermes.HermesToolsModel.further_wording = ("If the request asks for more calls, reply with "
                                           "only the further calls.")
sys.argv[0] = "bfcl_local.py"
bfcl_local.main()
