"""The TensorFlow sweep's special cases: calls the registry-driven cases cannot build (stateful
generators, tf.data pipelines, large inputs that reach the multi-threaded kernels, seeded raw ops).

Each entry of SPECIALS names the public op, a builder `fn(tf, seed) -> () -> result`, the call
facts the case stands for, whether it is seeded, and its pass. Imported by the worker only
(kb.sweep.tf_worker, a child process that has imported TensorFlow); `tf` is passed in.
"""

from __future__ import annotations

from typing import Any


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


SPECIALS: dict[str, dict[str, Any]] = {
    "generator-non-deterministic-state": {"op": "tf.random.Generator.from_non_deterministic_state",
                                          "fn": _sp_generator_nondet, "call": {}},
    "generator-from-seed": {"op": "tf.random.Generator.from_seed", "fn": _sp_generator_seed, "call": {}},
    "global-generator": {"op": "tf.random.get_global_generator", "fn": _sp_global_generator, "call": {}},
    "map-deterministic-false": {"op": "tf.data.Dataset.map", "fn": _sp_map_nondet,
                                "call": {"num_parallel_calls": 4, "deterministic": False}},
    "options-deterministic-false": {"op": "tf.data.Options.deterministic", "fn": _sp_options_nondet,
                                    "call": {"deterministic": False}},
    "interleave-deterministic-false": {"op": "tf.data.Dataset.interleave", "fn": _sp_interleave_nondet,
                                       "call": {"num_parallel_calls": 4, "deterministic": False}},
    "shuffle": {"op": "tf.data.Dataset.shuffle", "fn": _sp_shuffle, "call": {"buffer_size": 64}, "seeded": True},
    "dataset-random": {"op": "tf.data.Dataset.random", "fn": _sp_random_dataset, "call": {}, "seeded": True},
    "large-reduce-sum": {"op": "tf.math.reduce_sum", "fn": _sp_big_sum, "call": {"input.ndim": 1}},
    "large-matmul": {"op": "tf.linalg.matmul", "fn": _sp_big_matmul, "call": {"input.ndim": 2}},
    "large-unsorted-segment-sum": {"op": "tf.math.unsorted_segment_sum", "fn": _sp_big_segment,
                                   "call": {"input.ndim": 1}},
    "large-conv2d-filter-grad": {"op": "tf.nn.conv2d", "fn": _sp_big_conv_grad, "call": {"input.ndim": 4},
                                 "pass": "backward"},
    "large-bias-add-grad": {"op": "tf.nn.bias_add", "fn": _sp_big_bias_add_grad, "call": {"input.ndim": 2},
                            "pass": "backward"},
    "large-gather-grad": {"op": "tf.gather", "fn": _sp_big_gather_grad, "call": {"input.ndim": 2},
                          "pass": "backward"},
    "large-scatter-nd": {"op": "tf.scatter_nd", "fn": _sp_big_scatter_nd, "call": {"input.ndim": 2}},
    "raw-random-uniform-int": {"op": "tf.raw_ops.RandomUniformInt", "fn": _sp_raw_uniform_int, "call": {},
                               "seeded": True},
    "raw-parameterized-truncated-normal": {"op": "tf.raw_ops.ParameterizedTruncatedNormal",
                                           "fn": _sp_raw_param_truncated_normal, "call": {}, "seeded": True},
    "raw-sample-distorted-bounding-box": {"op": "tf.raw_ops.SampleDistortedBoundingBoxV2", "fn": _sp_raw_sample_bbox,
                                          "call": {"min_object_covered": 0.1}, "seeded": True},
    "raw-uniform-candidate-sampler": {"op": "tf.raw_ops.UniformCandidateSampler", "fn": _sp_raw_candidate_sampler,
                                      "call": {"num_true": 1, "num_sampled": 4, "unique": True, "range_max": 10},
                                      "seeded": True},
    "raw-non-deterministic-ints": {"op": "tf.raw_ops.NonDeterministicInts", "fn": _sp_raw_nondet_ints, "call": {},
                                   "seeded": True},
    "sample-distorted-bounding-box": {"op": "tf.image.sample_distorted_bounding_box", "fn": _sp_sample_bbox,
                                      "call": {"min_object_covered": 0.1}, "seeded": True},
    "raw-sparse-softmax-xent": {"op": "tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits", "fn": _sp_raw_sparse_xent,
                                "call": {"features": "float", "labels": "int", "input.ndim": 2}},
    "raw-softmax-xent": {"op": "tf.raw_ops.SoftmaxCrossEntropyWithLogits", "fn": _sp_raw_xent,
                         "call": {"features": "float", "labels": "float", "input.ndim": 2}},
    "large-segment-mean": {"op": "tf.math.segment_mean", "fn": _sp_big_segment_mean,
                           "call": {"data": "float", "input.ndim": 1}},
}
