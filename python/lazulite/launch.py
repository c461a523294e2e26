"""Run a Python script as several communicating processes: ``python -m lazulite.launch``.

lazulite's distributed group is formed by MPI, so this launcher builds the ``mpirun``
command line (Open MPI's) and runs it, in the spirit of MLX's ``mlx.launch``::

    python -m lazulite.launch -n 4 train.py --epochs 3
    python -m lazulite.launch --hosts host1,host2 -n 8 train.py
    python -m lazulite.launch -n 2 -- -m pytest tests/   # interpreter options after --

Inside the script, ``mx.distributed.init()`` returns the group of all the processes.
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys


def mpirun_command(args, script_args):
    """The ``mpirun`` argument list for the parsed launcher ``args``."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise SystemExit(
            "lazulite.launch: mpirun was not found; install Open MPI "
            "(for example `apt-get install openmpi-bin libopenmpi-dev`)."
        )
    command = [mpirun, "-n", str(args.n)]
    if args.oversubscribe:
        command.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Open MPI refuses to run as root unless told; containers commonly run as root.
        command.append("--allow-run-as-root")
    # Share this machine's cores between the processes' kernel threads. mpirun binds each
    # process to one core, which would leave fewer processes than cores one core each:
    # then unbind them. (Multi-host runs keep mpirun's placement.)
    if not args.hosts and not args.hostfile and "RAYON_NUM_THREADS" not in os.environ:
        threads = max(1, (os.cpu_count() or 1) // args.n)
        command += ["-x", f"RAYON_NUM_THREADS={threads}"]
        if threads > 1:
            command += ["--bind-to", "none"]
    if args.hosts:
        command += ["--host", args.hosts]
    if args.hostfile:
        command += ["--hostfile", args.hostfile]
    for assignment in args.env:
        command += ["-x", assignment]
    if args.cwd:
        command += ["--wdir", args.cwd]
    for extra in args.mpi_arg:
        command += shlex.split(extra)
    return command + [args.python or sys.executable] + script_args


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m lazulite.launch",
        description="Run a Python script as N processes that form one lazulite.core.distributed group (through mpirun).",
    )
    parser.add_argument("-n", "--nproc", dest="n", type=int, default=1, help="number of processes (default 1)")
    parser.add_argument("--hosts", help="comma-separated hosts, as mpirun's --host (default: this machine)")
    parser.add_argument("--hostfile", help="an Open MPI hostfile")
    parser.add_argument(
        "--no-oversubscribe",
        dest="oversubscribe",
        action="store_false",
        help="refuse more processes than cores (mpirun's default); by default they are allowed",
    )
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE set in every process (repeatable)")
    parser.add_argument("--cwd", help="working directory of the processes")
    parser.add_argument("--python", help="the Python interpreter to run (default: this one)")
    parser.add_argument("--mpi-arg", action="append", default=[], help="extra arguments for mpirun (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="print the mpirun command first")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the script to run, followed by its arguments")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("-n must be at least 1")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a script to run is required")
    return args, command


def main(argv=None):
    args, script_args = parse(sys.argv[1:] if argv is None else argv)
    command = mpirun_command(args, script_args)
    if args.verbose:
        print(shlex.join(command), flush=True)
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
