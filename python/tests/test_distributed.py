"""``mx.distributed`` and the distributed layers: a group of one here (checked against
real MLX's behaviour), and the multi-process checks in ``multiprocess/`` run under
``mpirun`` with 2 and 4 processes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn
from lazulite.nn.layers.distributed import shard_linear

HERE = Path(__file__).resolve().parent


def test_a_process_started_alone_is_a_group_of_one():
    group = mx.distributed.init()
    assert (group.rank(), group.size()) == (0, 1)
    assert isinstance(group, mx.distributed.Group)
    x = mx.array([1.0, 2.0])
    # As MLX: reductions and gathers return their input in a group of one.
    for op in [mx.distributed.all_sum, mx.distributed.all_max, mx.distributed.all_min,
               mx.distributed.all_gather, mx.distributed.sum_scatter]:
        assert op(x) is not None and op(x).tolist() == [1.0, 2.0]
    assert mx.distributed.all_sum(2.0).item() == 2.0


def test_errors_in_a_group_of_one_match_mlx():
    group = mx.distributed.init()
    with pytest.raises(ValueError, match="Cannot send to a singleton group"):
        mx.distributed.send(mx.array(1), 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        mx.distributed.recv((2,), mx.float32, 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        mx.distributed.recv_like(mx.zeros(2), 0)
    with pytest.raises(RuntimeError, match="Cannot split the distributed group further"):
        group.split(0)
    with pytest.raises(TypeError):
        mx.distributed.Group()
    with pytest.raises(TypeError):
        mx.distributed.all_sum(mx.array(1), group=3)


def test_init_arguments_match_mlx():
    with pytest.raises(ValueError, match="The only valid values for backend"):
        mx.distributed.init(backend="foo")
    with pytest.raises(RuntimeError, match=r"\[distributed\] Couldn't initialize any backend"):
        mx.distributed.init(strict=True)
    with pytest.raises(RuntimeError):
        mx.distributed.init(strict=True, backend="mpi")
    with pytest.raises(RuntimeError):
        mx.distributed.init(strict=True, backend="ring")
    with pytest.raises(ValueError, match="all_gather_factory"):
        mx.distributed.init(all_gather_factory=lambda r, n: None)
    assert mx.distributed.init(backend="ring").size() == 1
    assert mx.distributed.is_available("ring") is False
    assert mx.distributed.is_available("foo") is False
    assert isinstance(mx.distributed.is_available(), bool)


def test_layers_in_a_group_of_one_equal_the_linear_layer():
    layer = nn.Linear(4, 6)
    x = mx.random.normal((3, 4))
    for sharding in ["all-to-sharded", "sharded-to-all"]:
        np.testing.assert_allclose(np.array(shard_linear(layer, sharding)(x)), np.array(layer(x)), rtol=1e-6)
    with pytest.raises(ValueError, match="not supported"):
        shard_linear(layer, "diagonal")
    grads = {"w": mx.ones((2,))}
    assert nn.average_gradients(grads) is grads
    assert nn.fully_shard(layer) is layer


def test_mlx_lm_models_import_and_run_on_one_process():
    from mlx_lm.models import base, llama

    assert base.mx is mx
    args = llama.ModelArgs(model_type="llama", hidden_size=32, num_hidden_layers=1, intermediate_size=64,
                           num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, vocab_size=50)
    model = llama.Model(args)
    logits = model(mx.array([[1, 2, 3]]))
    assert logits.shape == (1, 3, 50)
    # In a group of one, sharding changes nothing.
    before = np.array(logits)
    model.shard()
    np.testing.assert_allclose(np.array(model(mx.array([[1, 2, 3]]))), before, rtol=1e-6)


def test_launcher_builds_the_mpirun_command():
    from lazulite import launch

    args, script = launch.parse(["-n", "3", "--hosts", "a,b", "--env", "X=1", "train.py", "--lr", "0.1"])
    if shutil.which("mpirun") is None:
        with pytest.raises(SystemExit, match="mpirun was not found"):
            launch.mpirun_command(args, script)
        return
    command = launch.mpirun_command(args, script)
    assert command[1:3] == ["-n", "3"] and "--oversubscribe" in command
    assert command[command.index("--host") + 1] == "a,b" and command[command.index("-x") + 1] == "X=1"
    assert command[-3:] == ["train.py", "--lr", "0.1"]


def mpirun_or_skip():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        if os.environ.get("CI"):
            pytest.fail("mpirun is missing: the test command installs Open MPI (openmpi-bin)")
        pytest.skip("needs Open MPI (openmpi-bin, libopenmpi-dev)")
    return mpirun


@pytest.mark.parametrize("processes", [2, 4])
@pytest.mark.parametrize("checks", ["check_collectives.py", "check_layers.py", "check_mlx_lm.py"])
def test_under_mpirun(processes, checks):
    mpirun_or_skip()
    # The launcher runs this interpreter with the arguments after `--`.
    command = [sys.executable, "-m", "lazulite.launch", "-n", str(processes), "--",
               "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--color=no",
               "-o", "python_files=check_*.py", str(HERE / "multiprocess" / checks)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert output.count(" passed") >= processes, output[-3000:]


def test_data_parallel_example_reaches_the_same_parameters_with_1_and_4_processes(tmp_path):
    mpirun_or_skip()
    example = HERE.parent / "examples" / "data_parallel.py"
    arguments = ["--steps", "5", "--batch", "64"]
    one = subprocess.run([sys.executable, str(example), *arguments, "--save", str(tmp_path / "one.npz")],
                         capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr[-3000:]
    four = subprocess.run([sys.executable, "-m", "lazulite.launch", "-n", "4", str(example), *arguments,
                           "--save", str(tmp_path / "four.npz")], capture_output=True, text=True, timeout=300)
    assert four.returncode == 0, (four.stdout + four.stderr)[-3000:]
    assert "4 process(es)" in four.stdout
    a, b = np.load(tmp_path / "one.npz"), np.load(tmp_path / "four.npz")
    assert sorted(a) == sorted(b) and len(a) == 6
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_process_that_dies_ends_the_job_instead_of_hanging_it(tmp_path):
    mpirun_or_skip()
    script = tmp_path / "dies.py"
    script.write_text(
        "import os, lazulite.core as mx\n"
        "group = mx.distributed.init(strict=True)\n"
        "if group.rank() == 1:\n"
        "    os._exit(3)\n"
        "mx.eval(mx.distributed.recv((4,), mx.float32, 1))  # never sent\n"
    )
    done = subprocess.run([sys.executable, "-m", "lazulite.launch", "-n", "2", str(script)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0


@pytest.mark.parametrize("variable", ["MLX_MPI_LIBNAME", "LAZULITE_MPI_LIBNAME"])
def test_the_mpi_library_name_can_be_overridden(variable):
    code = (
        "import lazulite.core as mx\n"
        "print(mx.distributed.is_available())\n"
        "try:\n"
        "    mx.distributed.init(strict=True, backend='mpi')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, **{variable: "libno-such-mpi.so"})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout.splitlines() == ["False", "[mpi] Cannot initialize MPI"], done.stdout + done.stderr
