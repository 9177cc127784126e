"""The backend of a run: WT_TEST_BACKEND = cpu (default), vulkan or gles.
A WebGPU run whose adapter is missing fails (the context cannot be made);
it never skips."""
import os

import numpy as np
import pytest

import webtensor as wt

BACKEND = os.environ.get("WT_TEST_BACKEND", "cpu")


@pytest.fixture(scope="session")
def ctx():
    c = wt.Context(BACKEND)
    want = "cpu" if BACKEND == "cpu" else "webgpu:" + BACKEND
    assert c.device == want, "asked for %s, got %s (%s)" % (BACKEND, c.device,
                                                             c.info()["reason"])
    wt.set_default_context(c)
    yield c
    wt.set_default_context(None)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
