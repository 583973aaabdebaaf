"""Set OpenMP's passive wait before any test module imports llama.cpp (see models/local.py)."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
