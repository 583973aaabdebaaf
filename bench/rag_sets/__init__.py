"""Small RAG sets with graded answers and the chunk each answer should cite
(:mod:`bench.rag_citations`): ``dev`` to try things on, ``heldout`` to report."""
