"""The run engine. Internal: :class:`toolcycle.Agent` is its face, and nothing here is public.

Read :mod:`.loop` first: it is the only module that sequences a run (run -> attempts ->
iterations). :mod:`.state` holds the run's data and its frozen setup, :mod:`.calls` executes
one turn's tool calls, :mod:`.threads` runs sync tools on worker threads, :mod:`.endings` says
how an attempt ended, :mod:`.team` runs an agent called as a tool inside the calling run.
Concepts the engine uses but does not own live beside it: limits in
:mod:`toolcycle.limits`, the held answer to the output call in :mod:`toolcycle.output`,
the trace in :mod:`toolcycle.tracing`.
"""
