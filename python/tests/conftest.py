import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


@pytest.fixture
def rng(request):
    # Fresh random inputs on every run; the seed is printed on failure.
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed = {seed}")
    return np.random.default_rng(seed)
