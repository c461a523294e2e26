import numpy as np
import pytest

import lazulite.core as mx

DTYPES = [
    mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.int8, mx.int16, mx.int32,
    mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64,
]
# NumPy's dtype for each lazulite dtype NumPy has.
NP = {
    mx.bool_: np.bool_, mx.uint8: np.uint8, mx.uint16: np.uint16, mx.uint32: np.uint32,
    mx.uint64: np.uint64, mx.int8: np.int8, mx.int16: np.int16, mx.int32: np.int32,
    mx.int64: np.int64, mx.float16: np.float16, mx.float32: np.float32,
    mx.float64: np.float64, mx.complex64: np.complex64,
}


def name(dtype):
    return repr(dtype).removeprefix("mlx.core.")


@pytest.fixture(autouse=True)
def default_printoptions():
    yield
    mx.set_printoptions(-1)

