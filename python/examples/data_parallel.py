"""Data-parallel training of an MLP with lazulite: every process holds the whole model,
takes its share of each global batch, and the gradients are averaged over the processes
before the optimizer step, so 1 or N processes follow the same trajectory.

    python python/examples/data_parallel.py                          # one process
    python -m lazulite.launch -n 4 python/examples/data_parallel.py  # four

Options: --steps N, --batch GLOBAL_BATCH, --save params.npz (rank 0 writes the final
parameters).
"""

import argparse
import time

import lazulite.core as mx
import lazulite.nn as nn
import lazulite.optimizers as optim
from lazulite.utils import tree_flatten


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--save")
    args = parser.parse_args()

    group = mx.distributed.init()
    rank, size = group.rank(), group.size()
    if args.batch % size:
        raise SystemExit(f"the global batch {args.batch} must divide by the {size} processes")

    # The same model and data on every process: one seed.
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    mx.eval(model.parameters())
    inputs = mx.random.normal((args.steps, args.batch, 784))
    labels = mx.random.randint(0, 10, (args.steps, args.batch))
    # SGD with momentum: linear in the gradients, so summing them in another order moves
    # the parameters by rounding only (Adam's normalised steps amplify it where grads ~ 0).
    optimizer = optim.SGD(learning_rate=0.1, momentum=0.9)

    def loss_fn(x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    share = args.batch // size
    mine = slice(rank * share, (rank + 1) * share)

    start = time.perf_counter()
    for step in range(args.steps):
        loss, grads = loss_and_grad(inputs[step, mine], labels[step, mine])
        optimizer.update(model, nn.average_gradients(grads))
        mx.eval(model.parameters(), optimizer.state, loss)
    elapsed = time.perf_counter() - start

    mean_loss = mx.distributed.all_sum(loss).item() / size
    if rank == 0:
        print(f"{size} process(es): {args.steps} steps of a {args.batch}-example batch in {elapsed:.2f} s "
              f"({1e3 * elapsed / args.steps:.1f} ms/step), last loss {mean_loss:.4f}")
        if args.save:
            mx.savez(args.save, **dict(tree_flatten(model.parameters())))


if __name__ == "__main__":
    main()
