"""The TensorFlow sweep's special cases: calls the registry-driven cases cannot build (stateful
generators, tf.data pipelines, large inputs that reach the multi-threaded kernels, seeded raw ops).

Each entry of SPECIALS is a Case (kb/case.py): the public op, the call facts the case stands for,
its pass, a builder `build(tf, seed) -> () -> result`, and whether it is seeded (run under each
seed mode). Imported by the worker only
(kb.sweep.tf_worker, a child process that has imported TensorFlow); `tf` is passed in.
"""

from __future__ import annotations

from kb.case import Case


def _sp_generator_nondet(tf, seed):
    g = tf.random.Generator.from_non_deterministic_state()
    return lambda: g.normal([4])


def _sp_generator_seed(tf, seed):
    g = tf.random.Generator.from_seed(seed if seed is not None else 1)
    return lambda: g.normal([4])


def _sp_global_generator(tf, seed):
    return lambda: tf.random.get_global_generator().normal([4])


def _sp_map_nondet(tf, seed):
    def f():
        ds = tf.data.Dataset.range(256).map(lambda x: x * 2, num_parallel_calls=4, deterministic=False)
        return tf.constant([int(v) for v in ds])
    return f


def _sp_options_nondet(tf, seed):
    def f():
        opts = tf.data.Options()
        opts.deterministic = False
        ds = tf.data.Dataset.range(256).map(lambda x: x * 2, num_parallel_calls=4).with_options(opts)
        return tf.constant([int(v) for v in ds])
    return f


def _sp_interleave_nondet(tf, seed):
    def f():
        ds = tf.data.Dataset.range(8).interleave(lambda x: tf.data.Dataset.range(x * 10, x * 10 + 10),
                                                 cycle_length=4, num_parallel_calls=4, deterministic=False)
        return tf.constant([int(v) for v in ds])
    return f


def _sp_shuffle(tf, seed):
    def f():
        ds = tf.data.Dataset.range(64).shuffle(64, seed=seed)
        return tf.constant([int(v) for v in ds])
    return f


def _sp_random_dataset(tf, seed):
    def f():
        ds = tf.data.Dataset.random(seed=seed).take(8)
        return tf.constant([int(v) for v in ds])
    return f


def _sp_big_sum(tf, seed):
    import numpy as np
    x = tf.constant(np.random.RandomState(0).standard_normal(1 << 22).astype("float32"))
    return lambda: tf.reduce_sum(x)


def _sp_big_matmul(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    a = tf.constant(r.standard_normal((512, 2048)).astype("float32"))
    b = tf.constant(r.standard_normal((2048, 256)).astype("float32"))
    return lambda: tf.matmul(a, b)


def _sp_big_segment(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    x = tf.constant(r.standard_normal((1 << 20,)).astype("float32"))
    ids = tf.constant(r.randint(0, 16, size=(1 << 20,)).astype("int32"))
    return lambda: tf.math.unsorted_segment_sum(x, ids, 16)


def _sp_big_conv_grad(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    x = tf.constant(r.standard_normal((32, 32, 32, 3)).astype("float32"))
    w = tf.constant(r.standard_normal((3, 3, 3, 64)).astype("float32"))
    up = tf.constant(r.standard_normal((32, 32, 32, 64)).astype("float32"))

    def f():
        with tf.GradientTape() as tape:
            tape.watch(w)
            y = tf.nn.conv2d(x, w, 1, "SAME")
        return tape.gradient(y, w, output_gradients=up)
    return f


def _sp_big_bias_add_grad(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    x = tf.constant(r.standard_normal((4096, 256)).astype("float32"))
    b = tf.constant(r.standard_normal((256,)).astype("float32"))
    up = tf.constant(r.standard_normal((4096, 256)).astype("float32"))

    def f():
        with tf.GradientTape() as tape:
            tape.watch(b)
            y = tf.nn.bias_add(x, b)
        return tape.gradient(y, b, output_gradients=up)
    return f


def _sp_big_gather_grad(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    p = tf.constant(r.standard_normal((64, 128)).astype("float32"))
    idx = tf.constant(r.randint(0, 64, size=(1 << 16,)).astype("int32"))
    up = tf.constant(r.standard_normal((1 << 16, 128)).astype("float32"))

    def f():
        with tf.GradientTape() as tape:
            tape.watch(p)
            y = tf.gather(p, idx)
        return tf.convert_to_tensor(tape.gradient(y, p, output_gradients=up))
    return f


def _sp_big_scatter_nd(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    idx = tf.constant(r.randint(0, 64, size=(1 << 18, 1)).astype("int32"))
    upd = tf.constant(r.standard_normal((1 << 18,)).astype("float32"))
    return lambda: tf.scatter_nd(idx, upd, [64])


# Calls the generic builder cannot shape (scalar bounds, [3]-vector image sizes, [N, 1] classes),
# made by hand so that each refusal rule read from TensorFlow's code is measured per release.
def _raw_seeds(seed):
    """Raw kernels: the defaults seed=0, seed2=0 without an op seed; seed=7, seed2=11 with one."""
    return {"seed": 7, "seed2": 11} if seed else {"seed": 0, "seed2": 0}


def _sp_raw_uniform_int(tf, seed):
    return lambda: tf.raw_ops.RandomUniformInt(shape=[8], minval=0, maxval=100, **_raw_seeds(seed))


def _sp_raw_param_truncated_normal(tf, seed):
    return lambda: tf.raw_ops.ParameterizedTruncatedNormal(shape=[8], means=0.0, stdevs=1.0, minvals=-2.0,
                                                           maxvals=2.0, **_raw_seeds(seed))


def _sp_raw_sample_bbox(tf, seed):
    return lambda: tf.raw_ops.SampleDistortedBoundingBoxV2(image_size=[64, 64, 3], bounding_boxes=[[[0.1, 0.1, 0.9, 0.9]]],
                                                           min_object_covered=0.1, **_raw_seeds(seed))


def _sp_raw_candidate_sampler(tf, seed):
    classes = tf.constant([[1], [2]], dtype=tf.int64)
    return lambda: tf.raw_ops.UniformCandidateSampler(true_classes=classes, num_true=1, num_sampled=4, unique=True,
                                                      range_max=10, **_raw_seeds(seed))[0]


def _sp_raw_nondet_ints(tf, seed):
    return lambda: tf.raw_ops.NonDeterministicInts(shape=[4])


def _sp_sample_bbox(tf, seed):
    kw = {"seed": seed} if seed else {}
    return lambda: tf.image.sample_distorted_bounding_box([64, 64, 3], [[[0.1, 0.1, 0.9, 0.9]]],
                                                          min_object_covered=0.1, **kw)


def _sp_raw_sparse_xent(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    logits = tf.constant(r.standard_normal((512, 64)).astype("float32"))
    labels = tf.constant(r.randint(0, 64, size=(512,)).astype("int32"))
    return lambda: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels)


def _sp_raw_xent(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    logits = tf.constant(r.standard_normal((512, 64)).astype("float32"))
    labels = tf.nn.softmax(tf.constant(r.standard_normal((512, 64)).astype("float32")))
    return lambda: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)


def _sp_big_segment_mean(tf, seed):
    import numpy as np
    r = np.random.RandomState(0)
    x = tf.constant(r.standard_normal((1 << 20,)).astype("float32"))
    ids = tf.constant(np.sort(r.randint(0, 16, size=(1 << 20,))).astype("int32"))
    return lambda: tf.math.segment_mean(x, ids)


SPECIALS: dict[str, Case] = {
    "generator-non-deterministic-state": Case("tf.random.Generator.from_non_deterministic_state", {},
                                              passes="forward", build=_sp_generator_nondet),
    "generator-from-seed": Case("tf.random.Generator.from_seed", {}, passes="forward", build=_sp_generator_seed),
    "global-generator": Case("tf.random.get_global_generator", {}, passes="forward", build=_sp_global_generator),
    "map-deterministic-false": Case("tf.data.Dataset.map", {"num_parallel_calls": 4, "deterministic": False},
                                    passes="forward", build=_sp_map_nondet),
    "options-deterministic-false": Case("tf.data.Options.deterministic", {"deterministic": False},
                                        passes="forward", build=_sp_options_nondet),
    "interleave-deterministic-false": Case(
        "tf.data.Dataset.interleave", {"num_parallel_calls": 4, "deterministic": False},
        passes="forward", build=_sp_interleave_nondet),
    "shuffle": Case("tf.data.Dataset.shuffle", {"buffer_size": 64}, passes="forward", build=_sp_shuffle, seeded=True),
    "dataset-random": Case("tf.data.Dataset.random", {}, passes="forward", build=_sp_random_dataset, seeded=True),
    "large-reduce-sum": Case("tf.math.reduce_sum", {"input.ndim": 1}, passes="forward", build=_sp_big_sum),
    "large-matmul": Case("tf.linalg.matmul", {"input.ndim": 2}, passes="forward", build=_sp_big_matmul),
    "large-unsorted-segment-sum": Case("tf.math.unsorted_segment_sum", {"input.ndim": 1},
                                       passes="forward", build=_sp_big_segment),
    "large-conv2d-filter-grad": Case("tf.nn.conv2d", {"input.ndim": 4}, passes="backward", build=_sp_big_conv_grad),
    "large-bias-add-grad": Case("tf.nn.bias_add", {"input.ndim": 2}, passes="backward", build=_sp_big_bias_add_grad),
    "large-gather-grad": Case("tf.gather", {"input.ndim": 2}, passes="backward", build=_sp_big_gather_grad),
    "large-scatter-nd": Case("tf.scatter_nd", {"input.ndim": 2}, passes="forward", build=_sp_big_scatter_nd),
    "raw-random-uniform-int": Case("tf.raw_ops.RandomUniformInt", {},
                                   passes="forward", build=_sp_raw_uniform_int, seeded=True),
    "raw-parameterized-truncated-normal": Case("tf.raw_ops.ParameterizedTruncatedNormal", {},
                                               passes="forward", build=_sp_raw_param_truncated_normal, seeded=True),
    "raw-sample-distorted-bounding-box": Case("tf.raw_ops.SampleDistortedBoundingBoxV2", {"min_object_covered": 0.1},
                                              passes="forward", build=_sp_raw_sample_bbox, seeded=True),
    "raw-uniform-candidate-sampler": Case(
        "tf.raw_ops.UniformCandidateSampler", {"num_true": 1, "num_sampled": 4, "unique": True, "range_max": 10},
        passes="forward", build=_sp_raw_candidate_sampler, seeded=True),
    "raw-non-deterministic-ints": Case("tf.raw_ops.NonDeterministicInts", {},
                                       passes="forward", build=_sp_raw_nondet_ints, seeded=True),
    "sample-distorted-bounding-box": Case("tf.image.sample_distorted_bounding_box", {"min_object_covered": 0.1},
                                          passes="forward", build=_sp_sample_bbox, seeded=True),
    "raw-sparse-softmax-xent": Case(
        "tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits", {"features": "float", "labels": "int", "input.ndim": 2},
        passes="forward", build=_sp_raw_sparse_xent),
    "raw-softmax-xent": Case(
        "tf.raw_ops.SoftmaxCrossEntropyWithLogits", {"features": "float", "labels": "float", "input.ndim": 2},
        passes="forward", build=_sp_raw_xent),
    "large-segment-mean": Case("tf.math.segment_mean", {"data": "float", "input.ndim": 1},
                               passes="forward", build=_sp_big_segment_mean),
}
