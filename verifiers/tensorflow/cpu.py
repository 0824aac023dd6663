"""CPU-side sources: thread-pool parallelism and parallel stateful data loaders."""

from __future__ import annotations

import numpy as np

from verifiers import verifier
from verifiers.tensorflow.common import mixed


@verifier("tensorflow.cpu_thread_parallelism", framework="tensorflow", device="cpu")
def cpu_thread_parallelism(ctx):
    """Weight updates racing in the inter-op pool: 16 unordered `assign_add`s to one variable
    in a TF1 graph (no control dependencies, as an optimizer's per-tower updates) run in
    whatever order the inter-op threads pick, so the float32 sum rounds differently. CPU1
    (one intra- and one inter-op thread, applied by the harness) fixes the order."""
    import tensorflow as tf

    rng = np.random.default_rng(ctx.seed)
    size = ctx.size(200_000, 1000)
    updates = [mixed(rng, (size,)) for _ in range(16)]
    graph = tf.Graph()
    with graph.as_default():
        var = tf.compat.v1.Variable(np.zeros(size, np.float32), use_resource=False)
        ops = [tf.compat.v1.assign_add(var, tf.constant(u), use_locking=False) for u in updates]
        step = tf.group(*ops)
        init = tf.compat.v1.global_variables_initializer()
    threads = 1 if ctx.has("CPU1") else 0  # 0 = TensorFlow's default (one per core)
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    session = tf.compat.v1.Session(graph=graph, config=config)

    def run():
        session.run(init)
        session.run(step)
        return session.run(var)

    return run


@verifier("tensorflow.data_loader_parallelism", framework="tensorflow", device="any", handles=("DL1",))
def data_loader_parallelism(ctx):
    """A tf.data map stage with a stateful augmentation (one shared NumPy generator, as in the
    GTC talk) run with num_parallel_calls=4: which element gets which random draw depends on
    thread scheduling. DL1: num_parallel_calls=1. The generator is re-seeded every run."""
    import tensorflow as tf

    state = {"rng": np.random.RandomState(0)}

    def augment(x):
        return np.float32(x) + np.float32(state["rng"].uniform())

    calls = 1 if ctx.has("DL1") else 4
    count = ctx.size(2000, 200)

    def run():
        state["rng"] = np.random.RandomState(0)
        ds = tf.data.Dataset.range(count).map(
            lambda x: tf.numpy_function(augment, [x], tf.float32), num_parallel_calls=calls, deterministic=True
        )
        return np.fromiter((float(v) for v in ds.as_numpy_iterator()), dtype=np.float32)

    return run
