"""Calls whose shapes do not fit (operands that do not broadcast, sizes that do not
divide), as a function of the module (`mlx.core` or `lazulite.core`) so that the generator
of mlx_shape_errors.json and test_shape_errors.py run the same table. Only calls that MLX
answers with an exception: a few others crash its process (`unflatten` of 6 into (-1, 0),
an out-of-bounds `slice_update`)."""


def cases(mx):
    """name -> function of no arguments that must raise."""
    a = mx.zeros((2, 3))

    def assign_slice():
        b = mx.zeros((4, 3))
        b[1:3] = mx.zeros((3, 3))
        mx.eval(b)

    def assign_gathered():
        b = mx.zeros((4, 3))
        b[mx.array([0, 1])] = mx.zeros((3, 3))
        mx.eval(b)

    return {
        "add": lambda: a + mx.zeros((4,)),
        "subtract": lambda: mx.subtract(a, mx.zeros((4,))),
        "multiply_transposed": lambda: a * mx.zeros((3, 2)),
        "where": lambda: mx.where(mx.zeros((2,)) > 0, mx.zeros((3,)), 1),
        "broadcast_to": lambda: mx.broadcast_to(mx.zeros((3,)), (2, 4)),
        "broadcast_to_scalar": lambda: mx.broadcast_to(a, ()),
        "broadcast_to_fewer_axes": lambda: mx.broadcast_to(a, (3,)),
        "broadcast_shapes": lambda: mx.broadcast_shapes((2, 3), (4,)),
        "full": lambda: mx.full((2, 3), mx.zeros((4,))),
        "assign_slice": assign_slice,
        "assign_gathered": assign_gathered,
        "put_along_axis": lambda: mx.put_along_axis(
            a, mx.zeros((2, 1), dtype=mx.int32), mx.zeros((3, 3)), axis=1
        ),
        "reshape": lambda: mx.reshape(a, (4,)),
        "reshape_method": lambda: a.reshape(4),
        "reshape_inferred": lambda: mx.reshape(mx.zeros((6,)), (-1, 4)),
        "reshape_negative": lambda: mx.reshape(mx.zeros((6,)), (-2, 3)),
        "reshape_two_inferred": lambda: mx.reshape(mx.zeros((6,)), (-1, -1)),
        "reshape_empty_inferred": lambda: mx.reshape(mx.zeros((0,)), (-1, 0)),
        "unflatten": lambda: mx.unflatten(mx.zeros((6,)), 0, (4, 2)),
        "unflatten_inferred": lambda: mx.unflatten(mx.zeros((6,)), 0, (4, -1)),
        "unflatten_negative": lambda: mx.unflatten(mx.zeros((6,)), 0, (-2, 3)),
        "unflatten_two_inferred": lambda: mx.unflatten(mx.zeros((6,)), 0, (-1, -1)),
        "split": lambda: mx.split(mx.zeros((2, 5)), 2, axis=1),
        "concatenate": lambda: mx.concatenate([a, mx.zeros((3, 4))], axis=1),
        "concatenate_three": lambda: mx.concatenate([a, mx.zeros((2, 4)), a]),
        "stack": lambda: mx.stack([mx.zeros((2,)), mx.zeros((3,))]),
        "matmul": lambda: a @ mx.zeros((4, 5)),
        "squeeze": lambda: mx.squeeze(a, 0),
        "rope_freqs": lambda: mx.fast.rope(
            mx.zeros((1, 4, 8)), 8, traditional=False, base=None, scale=1.0, offset=0,
            freqs=mx.zeros((3,)),
        ),
    }
