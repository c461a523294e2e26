"""Small programs the harness runs on both libraries where a call alone does not say
enough: transforms, layers, optimizers, tree utilities, in-place updates, printing.
Each takes the libraries (`lib.core`, `lib.nn`, `lib.optimizers`, `lib.utils`) first and
returns something the harness records and compares."""

import numpy as np


def data(lib, shape, salt=0, dtype="float32"):
    rng = np.random.default_rng(1000 + salt)
    return lib.core.array(rng.normal(size=shape).astype(np.float32)).astype(getattr(lib.core, dtype))


# ---------------------------------------------------------------- arrays
def setitem(lib, a, index, update):
    a[index] = update
    return a


def _at(op):
    def run(lib, a, index, value):
        return getattr(a.at[index], op)(value)

    return run


for _op in ("add", "subtract", "multiply", "divide", "maximum", "minimum"):
    globals()[f"at_{_op}"] = _at(_op)


def iterate(lib, a):
    return [x for x in a]


def property(lib, a, name):  # noqa: A001 - the name of the case
    return getattr(a, name)


def issubdtype(lib, dtype, category):
    return lib.core.issubdtype(getattr(lib.core, dtype), getattr(lib.core, category))


def dtype_attrs(lib):
    mx = lib.core
    names = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
             "float16", "bfloat16", "float32", "float64", "complex64"]
    return [(repr(getattr(mx, n)), getattr(mx, n).size, str(getattr(mx, n))) for n in names]


def printing(lib, a, precision=None):
    if precision is None:
        return repr(a).replace("lazulite.core", "mlx.core"), str(a)
    with lib.core.printoptions(precision=precision):
        return repr(a), str(a)


def quantize_roundtrip(lib, w):
    mx = lib.core
    q = mx.quantize(w, group_size=64, bits=4)
    return mx.dequantize(*q, group_size=64, bits=4)


def quantized_matmul(lib, x, w, transpose=True):
    mx = lib.core
    q, s, b = mx.quantize(w, group_size=32, bits=4)
    return mx.quantized_matmul(x, q, s, b, transpose=transpose, group_size=32, bits=4)


def gather_qmm(lib, x, w):
    mx = lib.core
    q, s, b = mx.quantize(w, group_size=32, bits=4)
    return mx.gather_qmm(x, q, s, b, rhs_indices=mx.array([1, 0, 1], dtype=mx.uint32), group_size=32, bits=4)


def quantize_roundtrip_fp(lib, w, mode):
    mx = lib.core
    return mx.dequantize(*mx.quantize(w, mode=mode), mode=mode)


def quantized_matmul_fp(lib, x, w, mode, transpose=True):
    mx = lib.core
    q, s = mx.quantize(w, mode=mode)
    return mx.quantized_matmul(x, q, s, transpose=transpose, mode=mode)


def gather_qmm_fp(lib, x, w, mode):
    mx = lib.core
    q, s = mx.quantize(w, mode=mode)
    return mx.gather_qmm(x, q, s, rhs_indices=mx.array([1, 0, 1], dtype=mx.uint32), mode=mode)


def qqmm_packed(lib, x, w, mode):
    mx = lib.core
    q, s = mx.quantize(w, mode=mode)
    return mx.qqmm(x, q, s, mode=mode)


def stft_roundtrip(lib, x):
    mx = lib.core
    w = mx.hanning(16)
    s = mx.fft.stft(x, n_fft=16, hop_length=4, window=w)
    return mx.fft.istft(s, n_fft=16, hop_length=4, window=w, length=x.shape[0])


# ---------------------------------------------------------------- random
def seed_then_uniform(lib, s):
    lib.core.random.seed(s)
    return lib.core.random.uniform(shape=(4,)), lib.core.random.uniform(shape=(2,))


def seed_then_normal(lib, s):
    lib.core.random.seed(s)
    return lib.core.random.normal((3,))


def seed_then_randint(lib, s):
    lib.core.random.seed(s)
    return lib.core.random.randint(0, 100, (5,))


def seed_then_bernoulli(lib, s):
    lib.core.random.seed(s)
    return lib.core.random.bernoulli(0.5, (6,))


def seed_twice(lib, s):
    mx = lib.core
    mx.random.seed(s)
    a = mx.random.uniform(shape=(3,))
    mx.random.seed(s)
    return a, mx.random.uniform(shape=(3,))


# ---------------------------------------------------------------- transforms
def grad_sin(lib, x):
    mx = lib.core
    return mx.grad(lambda v: mx.sin(v).sum())(x)


def grad_argnums(lib, x):
    mx = lib.core
    return mx.grad(lambda a, b: (a * b * b).sum(), argnums=(0, 1))(x, x + 1)


def grad_argnames(lib, x):
    mx = lib.core
    return mx.grad(lambda a, *, b: (a * b).sum(), argnames="b")(x, b=x * 2)


def grad_non_scalar(lib, x):
    mx = lib.core
    return mx.grad(lambda v: v * 2)(x)


def grad_int_input(lib, x):
    mx = lib.core
    return mx.grad(lambda v: (v * 2).sum())(x.astype(mx.int32))


def value_and_grad_tuple(lib, x):
    mx = lib.core
    return mx.value_and_grad(lambda v: ((v ** 2).sum(), v.max()))(x)


def vjp_basic(lib, x):
    mx = lib.core
    return mx.vjp(lambda a, b: [a * b, mx.exp(a)], [x, x + 1], [mx.ones_like(x), x])


def jvp_basic(lib, x):
    mx = lib.core
    return mx.jvp(lambda a: [mx.tanh(a) * 3], [x], [mx.ones_like(x) * 0.5])


def vmap_basic(lib, x):
    mx = lib.core
    return mx.vmap(lambda v: v * v.sum())(mx.stack([x, x * 2]))


def vmap_in_axes(lib, x):
    mx = lib.core
    m = mx.reshape(mx.arange(6, dtype=mx.float32), (3, 2))
    return mx.vmap(lambda a, b: a * b, in_axes=(1, None))(m, x)


def vmap_out_axes(lib, x):
    mx = lib.core
    return mx.vmap(lambda v: mx.outer(v, v), out_axes=2)(mx.stack([x, x + 1]))


def vmap_bad_axes(lib, x):
    mx = lib.core
    return mx.vmap(lambda v: v, in_axes=2)(x)


def vmap_size_mismatch(lib, x):
    mx = lib.core
    return mx.vmap(lambda a, b: a + b)(x, mx.ones((4,)))


def compile_basic(lib, x):
    mx = lib.core
    f = mx.compile(lambda v: mx.exp(-v) * mx.sin(v) + 1)
    return f(x), f(x * 2)


def compile_shapeless(lib, x):
    mx = lib.core
    f = mx.compile(lambda v: v * 2 + 1, shapeless=True)
    return f(x), f(mx.concatenate([x, x]))


def checkpoint_grad(lib, x):
    mx = lib.core
    return mx.grad(lambda v: mx.checkpoint(lambda w: mx.sin(w) * w)(v).sum())(x)


def custom_function_vjp(lib, x):
    mx = lib.core

    @mx.custom_function
    def f(v):
        return mx.exp(v)

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return (cotangent * 7,)

    return f(x), mx.grad(lambda v: f(v).sum())(x)


def grad_of_grad(lib, x):
    mx = lib.core
    return mx.grad(lambda v: mx.grad(lambda w: (w ** 3).sum())(v).sum())(x)


def vmap_of_grad(lib, x):
    mx = lib.core
    return mx.vmap(mx.grad(lambda v: mx.sin(v) * v))(x)


def stop_gradient_grad(lib, x):
    mx = lib.core
    return mx.grad(lambda v: (mx.stop_gradient(v) * v).sum())(x)


def grad_through_getitem(lib, x):
    mx = lib.core
    return mx.grad(lambda v: (v[1:] * v[mx.array([0, 0])].sum()).sum())(x)


def grad_of_sort(lib, x):
    mx = lib.core
    return mx.grad(lambda v: (mx.sort(v) * mx.arange(3)).sum())(x)


def grad_of_cumsum(lib, x):
    mx = lib.core
    return mx.grad(lambda v: (mx.cumsum(v) ** 2).sum())(x)


def jvp_of_max(lib, x):
    mx = lib.core
    return mx.jvp(lambda v: mx.max(v), [x], [mx.arange(3, dtype=mx.float32)])


def grad_wrong_output(lib, x):
    mx = lib.core
    return mx.grad(lambda v: "not an array")(x)


def grad_dict_input(lib, x):
    mx = lib.core
    return mx.grad(lambda p: (p["w"] * p["b"]).sum())({"w": x, "b": x + 1})


def vmap_dict(lib, x):
    mx = lib.core
    return mx.vmap(lambda p: p["a"] * 2)({"a": mx.stack([x, x])})


def eval_tree(lib, x):
    mx = lib.core
    tree = {"a": [x + 1, (x * 2,)], "b": 3}
    mx.eval(tree)
    return tree["a"]


def depends_basic(lib, x):
    mx = lib.core
    return mx.depends([x + 1], [x * 2])


def grad_complex(lib, x):
    mx = lib.core
    return mx.grad(lambda v: mx.abs(v * (1 + 2j)).sum())(x.astype(mx.complex64))


# ---------------------------------------------------------------- nn
def _layer(lib, make, x, seed=0):
    lib.core.random.seed(seed)
    m = make(lib.nn)
    out = m(x)
    return out, lib.utils.tree_flatten(m.parameters())


def nn_Linear(lib):
    return _layer(lib, lambda nn: nn.Linear(4, 3), data(lib, (2, 4)))


def nn_Linear_no_bias(lib):
    return _layer(lib, lambda nn: nn.Linear(4, 3, bias=False), data(lib, (2, 4)))


def nn_Bilinear(lib):
    lib.core.random.seed(0)
    m = lib.nn.Bilinear(3, 2, 4)
    return m(data(lib, (2, 3)), data(lib, (2, 2), 1))


def nn_Conv1d(lib):
    return _layer(lib, lambda nn: nn.Conv1d(2, 3, 3, stride=2, padding=1), data(lib, (1, 7, 2)))


def nn_Conv2d(lib):
    return _layer(lib, lambda nn: nn.Conv2d(2, 3, (2, 3), padding=1, groups=1), data(lib, (1, 5, 5, 2)))


def nn_Conv3d(lib):
    return _layer(lib, lambda nn: nn.Conv3d(1, 2, 2), data(lib, (1, 3, 3, 3, 1)))


def nn_ConvTranspose1d(lib):
    return _layer(lib, lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2), data(lib, (1, 4, 2)))


def nn_ConvTranspose2d(lib):
    return _layer(lib, lambda nn: nn.ConvTranspose2d(2, 1, 2, stride=2, padding=1), data(lib, (1, 3, 3, 2)))


def nn_Embedding(lib):
    return _layer(lib, lambda nn: nn.Embedding(10, 4), lib.core.array([[1, 9], [0, 3]]))


def nn_Embedding_as_linear(lib):
    lib.core.random.seed(0)
    m = lib.nn.Embedding(10, 4)
    return m.as_linear(data(lib, (2, 4)))


def nn_LayerNorm(lib):
    return _layer(lib, lambda nn: nn.LayerNorm(4, eps=1e-4), data(lib, (3, 4)))


def nn_RMSNorm(lib):
    return _layer(lib, lambda nn: nn.RMSNorm(4), data(lib, (3, 4)))


def nn_GroupNorm(lib):
    return _layer(lib, lambda nn: nn.GroupNorm(2, 4), data(lib, (2, 3, 4)))


def nn_BatchNorm_train(lib):
    lib.core.random.seed(0)
    m = lib.nn.BatchNorm(4)
    out = m(data(lib, (5, 4)))
    return out, m.running_mean, m.running_var


def nn_BatchNorm_eval(lib):
    lib.core.random.seed(0)
    m = lib.nn.BatchNorm(4)
    m(data(lib, (5, 4)))
    m.eval()
    return m(data(lib, (2, 4), 1))


def nn_InstanceNorm(lib):
    return _layer(lib, lambda nn: nn.InstanceNorm(3, affine=True), data(lib, (2, 4, 3)))


def nn_MultiHeadAttention(lib):
    lib.core.random.seed(0)
    m = lib.nn.MultiHeadAttention(8, 2)
    x = data(lib, (1, 3, 8))
    mask = lib.nn.MultiHeadAttention.create_additive_causal_mask(3)
    return m(x, x, x, mask=mask), mask


def nn_RoPE(lib):
    lib.core.random.seed(0)
    return lib.nn.RoPE(4, traditional=True)(data(lib, (1, 3, 4)), offset=2)


def nn_ALiBi(lib):
    return lib.nn.ALiBi()(lib.core.zeros((1, 2, 3, 3)))


def nn_SinusoidalPositionalEncoding(lib):
    return lib.nn.SinusoidalPositionalEncoding(6)(lib.core.arange(4))


def nn_MaxPool3d(lib):
    return lib.nn.MaxPool3d(2)(data(lib, (1, 4, 4, 4, 1)))


def nn_AvgPool3d(lib):
    return lib.nn.AvgPool3d(2, stride=1)(data(lib, (1, 3, 3, 3, 2)))


def nn_ConvTranspose3d(lib):
    return _layer(lib, lambda nn: nn.ConvTranspose3d(1, 2, 2), data(lib, (1, 2, 2, 2, 1)))


def nn_Dropout2d_eval(lib):
    m = lib.nn.Dropout2d(0.5)
    m.eval()
    return m(data(lib, (1, 2, 2, 3)))


def nn_Dropout3d_train(lib):
    lib.core.random.seed(5)
    return lib.nn.Dropout3d(0.5)(data(lib, (1, 2, 2, 2, 3)))


def nn_Dropout2d_train(lib):
    lib.core.random.seed(5)
    return lib.nn.Dropout2d(0.5)(data(lib, (1, 2, 2, 3)))


def nn_QuantizedEmbedding(lib):
    lib.core.random.seed(0)
    m = lib.nn.QuantizedEmbedding(8, 64, group_size=32, bits=4)
    return m(lib.core.array([1, 7])), m.as_linear(data(lib, (1, 64)))


def nn_QQLinear(lib, training):
    lib.core.random.seed(0)
    layer = lib.nn.QQLinear(64, 8)
    layer.train(training)
    return layer(data(lib, (1, 64)))


def nn_Transformer(lib):
    lib.core.random.seed(0)
    m = lib.nn.Transformer(8, 2, 1, 1, 16)
    m.eval()
    src, tgt = data(lib, (1, 3, 8)), data(lib, (1, 2, 8), 1)
    mask = lib.nn.MultiHeadAttention.create_additive_causal_mask(2)
    return m(src, tgt, None, mask, None)


def nn_TransformerEncoder(lib):
    lib.core.random.seed(0)
    m = lib.nn.TransformerEncoder(2, 8, 2)
    m.eval()
    return m(data(lib, (1, 3, 8)), None)


def nn_TransformerDecoderLayer(lib):
    lib.core.random.seed(0)
    m = lib.nn.TransformerDecoderLayer(8, 2, norm_first=False)
    m.eval()
    return m(data(lib, (1, 2, 8)), data(lib, (1, 3, 8), 1), None, None)


def nn_TransformerDecoder(lib):
    lib.core.random.seed(0)
    m = lib.nn.TransformerDecoder(1, 8, 2)
    m.eval()
    return m(data(lib, (1, 2, 8)), data(lib, (1, 3, 8), 1), None, None)


def nn_MaxPool1d(lib):
    return lib.nn.MaxPool1d(2, stride=1)(data(lib, (1, 5, 2)))


def nn_MaxPool2d(lib):
    return lib.nn.MaxPool2d(2, padding=1)(data(lib, (1, 4, 4, 1)))


def nn_AvgPool1d(lib):
    return lib.nn.AvgPool1d(3, stride=2)(data(lib, (1, 7, 2)))


def nn_AvgPool2d(lib):
    return lib.nn.AvgPool2d((2, 1))(data(lib, (1, 4, 4, 1)))


def nn_Upsample_nearest(lib):
    return lib.nn.Upsample(2.0, mode="nearest")(data(lib, (1, 2, 2, 1)))


def nn_Upsample_linear(lib):
    return lib.nn.Upsample((2, 1.5), mode="linear", align_corners=True)(data(lib, (1, 2, 2, 1)))


def nn_Dropout_eval(lib):
    m = lib.nn.Dropout(0.5)
    m.eval()
    return m(data(lib, (3, 3)))


def nn_Dropout_train(lib):
    lib.core.random.seed(4)
    return lib.nn.Dropout(0.5)(data(lib, (3, 3)))


def nn_GRU(lib):
    return _layer(lib, lambda nn: nn.GRU(3, 4), data(lib, (2, 5, 3)))


def nn_LSTM(lib):
    return _layer(lib, lambda nn: nn.LSTM(3, 4), data(lib, (2, 5, 3)))


def nn_RNN(lib):
    return _layer(lib, lambda nn: nn.RNN(3, 4), data(lib, (2, 5, 3)))


def nn_TransformerEncoderLayer(lib):
    lib.core.random.seed(0)
    m = lib.nn.TransformerEncoderLayer(8, 2, mlp_dims=16)
    m.eval()
    return m(data(lib, (1, 3, 8)), None)


def nn_Sequential(lib):
    return _layer(lib, lambda nn: nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2)), data(lib, (2, 4)))


def nn_QuantizedLinear(lib):
    lib.core.random.seed(0)
    m = lib.nn.QuantizedLinear.from_linear(lib.nn.Linear(64, 8), group_size=32, bits=4)
    return m(data(lib, (2, 64)))


def nn_Linear_grad(lib):
    lib.core.random.seed(0)
    m = lib.nn.Linear(4, 2)
    x, y = data(lib, (3, 4)), data(lib, (3, 2), 1)

    def loss(model):
        return lib.nn.losses.mse_loss(model(x), y)

    return lib.nn.value_and_grad(m, loss)(m)


def nn_Module_tree(lib):
    lib.core.random.seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.LayerNorm(3))
    m.freeze(keys=["bias"])
    return (sorted(k for k, _ in lib.utils.tree_flatten(m.parameters())),
            sorted(k for k, _ in lib.utils.tree_flatten(m.trainable_parameters())),
            sorted(k for k, _ in lib.utils.tree_flatten(m.children())), m.training)


def nn_Identity(lib):
    return lib.nn.Identity()(data(lib, (2,)))


def _act(name, *args):
    def run(lib):
        return getattr(lib.nn, name)(*args)(data(lib, (2, 4)))

    return run


for _name, _args in (("GELU", ()), ("ReLU", ()), ("Softmax", ()), ("Tanh", ()), ("Hardswish", ()), ("Step", (0.2,)),
                     ("GLU", ()), ("LogSoftmax", ()), ("Mish", ()), ("SiLU", ()), ("CELU", (0.5,)), ("ELU", ()),
                     ("HardShrink", ()), ("HardTanh", ()), ("LeakyReLU", (0.1,)), ("LogSigmoid", ()), ("ReLU2", ()),
                     ("ReLU6", ()), ("SELU", ()), ("Sigmoid", ()), ("Softmin", ()), ("Softplus", ()), ("Softshrink", ()),
                     ("Softsign", ())):
    globals()[f"nn_{_name}"] = _act(_name, *_args)


def nn_PReLU(lib):
    return _layer(lib, lambda nn: nn.PReLU(4), data(lib, (2, 4)))


def _init(name, *args):
    def run(lib):
        lib.core.random.seed(3)
        return getattr(lib.nn.init, name)(*args)(lib.core.zeros((3, 4)))

    return run


nn_init_normal = _init("normal", 0.0, 2.0)
nn_init_uniform = _init("uniform", -1.0, 1.0)
nn_init_glorot_uniform = _init("glorot_uniform")
nn_init_he_normal = _init("he_normal")
nn_init_constant = _init("constant", 0.5)
nn_init_identity = lambda lib: lib.nn.init.identity()(lib.core.zeros((3, 3)))  # noqa: E731


def nn_value_and_grad(lib):
    lib.core.random.seed(1)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.GELU(), lib.nn.Linear(4, 1))
    x = data(lib, (5, 3))
    return lib.nn.value_and_grad(m, lambda model, v: model(v).sum())(m, x)


def nn_quantize_model(lib):
    lib.core.random.seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(64, 8), lib.nn.Embedding(8, 64))
    lib.nn.quantize(m, group_size=32, bits=4)
    return [type(x).__name__ for x in m.layers], m.layers[0](data(lib, (1, 64)))


# ---------------------------------------------------------------- optimizers
def _params(lib):
    return {"w": data(lib, (3, 4)), "b": data(lib, (4,), 1), "nested": [data(lib, (2, 2), 2)]}


def _grads(lib, step):
    return lib.utils.tree_map(lambda p: p * 0.1 * (step + 1) - 0.05, _params(lib))


def _steps(lib, opt, n=3):
    params = _params(lib)
    for i in range(n):
        params = opt.apply_gradients(_grads(lib, i), params)
    return params


def _opt(name, **kw):
    def run(lib):
        return _steps(lib, getattr(lib.optimizers, name)(**kw))

    return run


opt_SGD = _opt("SGD", learning_rate=0.1)
opt_SGD_momentum = _opt("SGD", learning_rate=0.1, momentum=0.9, dampening=0.1)
opt_SGD_nesterov = _opt("SGD", learning_rate=0.1, momentum=0.9, nesterov=True)
opt_SGD_weight_decay = _opt("SGD", learning_rate=0.1, weight_decay=0.01)
opt_RMSprop = _opt("RMSprop", learning_rate=0.01)
opt_Adagrad = _opt("Adagrad", learning_rate=0.1)
opt_AdaDelta = _opt("AdaDelta", learning_rate=0.5)
opt_Adam = _opt("Adam", learning_rate=0.01)
opt_Adam_bias_correction = _opt("Adam", learning_rate=0.01, bias_correction=True)
opt_AdamW = _opt("AdamW", learning_rate=0.01, weight_decay=0.1)
opt_Adamax = _opt("Adamax", learning_rate=0.01)
opt_Lion = _opt("Lion", learning_rate=0.01)
opt_Adafactor = _opt("Adafactor")
opt_Muon = _opt("Muon", learning_rate=0.01)


def opt_MultiOptimizer(lib):
    o = lib.optimizers
    opt = o.MultiOptimizer([o.SGD(learning_rate=0.1), o.Adam(learning_rate=0.01)], [lambda name, w: w.ndim > 1])
    return _steps(lib, opt)


def opt_clip_grad_norm(lib):
    return lib.optimizers.clip_grad_norm(_grads(lib, 3), 0.5)


def _schedule(make):
    def run(lib):
        s = make(lib.optimizers)
        return [s(i) for i in (0, 1, 5, 10, 20)]

    return run


opt_cosine_decay = _schedule(lambda o: o.cosine_decay(0.1, 10, end=0.01))
opt_exponential_decay = _schedule(lambda o: o.exponential_decay(0.1, 0.9))
opt_step_decay = _schedule(lambda o: o.step_decay(0.1, 0.5, 4))
opt_linear_schedule = _schedule(lambda o: o.linear_schedule(0.0, 1.0, 8))
opt_join_schedules = _schedule(lambda o: o.join_schedules([o.linear_schedule(0.0, 0.1, 5), o.cosine_decay(0.1, 10)], [5]))


def opt_schedule_in_optimizer(lib):
    o = lib.optimizers
    opt = o.Adam(learning_rate=o.linear_schedule(0.0, 0.1, 5))
    params = _steps(lib, opt, 2)
    return params, opt.learning_rate, opt.step


def opt_state_after_steps(lib):
    opt = lib.optimizers.Adam(learning_rate=0.01)
    _steps(lib, opt, 2)
    return lib.utils.tree_flatten(opt.state)


# ---------------------------------------------------------------- utils
TREE = {"a": [1, (2.5, "x")], "b": {"c": None, "d": [3]}}


def utils_tree_flatten(lib):
    return lib.utils.tree_flatten(TREE)


def utils_tree_flatten_prefix(lib):
    return lib.utils.tree_flatten([TREE, 4], prefix=".p")


def utils_tree_flatten_dict(lib):
    return lib.utils.tree_flatten(TREE, destination={})


def utils_tree_flatten_leaf(lib):
    return lib.utils.tree_flatten(TREE, is_leaf=lambda x: isinstance(x, tuple))


def utils_tree_unflatten(lib):
    return lib.utils.tree_unflatten([("a.0", 1), ("a.1.x", 2), ("b", 3)])


def utils_tree_unflatten_list(lib):
    return lib.utils.tree_unflatten([("0.a", 1), ("1", 2)])


def utils_tree_map(lib):
    return lib.utils.tree_map(lambda v: v * 2 if isinstance(v, (int, float)) else v, TREE)


def utils_tree_map_rest(lib):
    return lib.utils.tree_map(lambda a, b: a + b, {"x": 1, "y": [2, 3]}, {"x": 10, "y": [20, 30]})


def utils_tree_map_with_path(lib):
    return lib.utils.tree_map_with_path(lambda p, v: p, {"x": 1, "y": [2, {"z": 3}]})


def utils_tree_reduce(lib):
    return lib.utils.tree_reduce(lambda acc, v: acc + v, {"x": 1, "y": [2, 3]}, 0)


def utils_tree_merge(lib):
    return lib.utils.tree_merge({"x": 1, "y": {"z": None}}, {"x": None, "y": {"z": 5}})


# ---------------------------------------------------------------- files and global state
def _save_load(fmt):
    def run(lib, a, b):
        import os
        import tempfile

        mx = lib.core
        with tempfile.TemporaryDirectory() as d:
            if fmt == "npy":
                path = os.path.join(d, "x.npy")
                mx.save(path, a)
            elif fmt == "npz":
                path = os.path.join(d, "x.npz")
                mx.savez(path, a, b=b)
            elif fmt == "npz_compressed":
                path = os.path.join(d, "x.npz")
                mx.savez_compressed(path, a=a, b=b)
            elif fmt == "safetensors":
                path = os.path.join(d, "x.safetensors")
                mx.save_safetensors(path, {"a": a, "b": b}, metadata={"k": "v"})
                return mx.load(path, return_metadata=True)
            else:
                path = os.path.join(d, "x.gguf")
                mx.save_gguf(path, {"a": a, "b": b}, {"name": "x"})
                return mx.load(path)
            return mx.load(path)

    return run


for _fmt in ("npy", "npz", "npz_compressed", "safetensors", "gguf"):
    globals()[f"save_load_{_fmt}"] = _save_load(_fmt)


def printoptions_state(lib, p):
    mx = lib.core
    before = mx.get_printoptions().precision
    mx.set_printoptions(precision=p)
    during = (mx.get_printoptions().precision, repr(mx.array([1.23456, 2.0])))
    mx.set_printoptions()
    return before, during, mx.get_printoptions().precision
