"""Tool calling for models that only write text (local models, base models).

- :mod:`.protocol`: the adapter that wraps a text-only model, describes the tools in the prompt
  and turns the reply back into tool calls;
- :mod:`.describe`: tools as one compact signature per line, for the prompt;
- :mod:`.calls`: lenient parsing of JSON tool calls in free text;
- :mod:`.react`: the Thought / Action / Action Input format;
- :mod:`.constrained`: a grammar that forces a valid call (llama.cpp's GBNF).
"""
