"""Causes of data-pipeline and TensorFlow 1 false alarms and misses of the sixth frozen corpus
(benchmarks/scan_frozen6/), fixed after its measure: tuned on it, so not a measure of it. Each fixture is a
folder of tests/fixtures/scanflow/, scanned as a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scanflow"


def _scan(tmp_path: Path, name: str, versions: str) -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return [f for f in scan([str(root)], given=pins.parse_versions(versions)).findings if not f.note]


def _lines(found: list, record: str, file: str) -> list[int]:
    return sorted(f.line for f in found if f.record == record and Path(f.path).name == file)


def test_loaders_read_datasets_through_modules_factories_and_callers(tmp_path):
    """clovaai/deep-text-recognition-benchmark, facebookresearch/barlowtwins, google-research/big_transfer (6
    false alarms, RULES R3): a loader that shuffles nothing over a dataset that draws nothing was reported
    because the scan could not see the dataset when a factory of another module made it (`ds, log =
    folders(root)`: a ConcatDataset of a list appended in a loop; also into a loop's variable), when it came
    through a parameter, when it was assigned in several branches, when a torchvision ImageFolder took its
    transforms by position, when the loader's keywords came as `**dict(...)`, or when the collate function
    called a transform object it made itself (`transform = PadNormalize((1, size, size))`, whose size is
    plain data; `self.to_tensor = transforms.ToTensor()`). Loaders over a dataset or collate function that
    does draw stay findings."""
    found = _scan(tmp_path, "loaders", "torch=2.11")
    assert _lines(found, "torch.data-loader-workers", "evaluate.py") == [12, 13, 27, 32, 46], found


def test_fit_on_tf_data_runs_no_keras_worker(tmp_path):
    """google-research/big_transfer (2 false alarms, RULES R3): `Model.fit` of datasets a tf.data pipeline makes
    (in another module, then `.map`ped; a function returning one whose mapped functions, defined inside it,
    return dicts) was reported for tf.data-loader-parallelism's worker condition, which holds only for Python
    generators and Sequences (Keras's `workers`, a PyDataset's workers); tf.data iterates its own datasets.
    (The generators of lines 18 and 20 are silent too since fit-runs-no-workers: no worker is asked for.)"""
    found = _scan(tmp_path, "fit", "tensorflow=2.20")
    assert _lines(found, "tf.data-loader-parallelism", "train.py") == [], found


def test_fit_that_asks_for_no_workers_starts_no_parallel_loader(tmp_path):
    """ZiyaoGeng/RecLearn (22 false alarms of the sixteenth corpus, RULES R3), and 42 `fit` sites of the earlier
    corpora, none labelled risky: `Model.fit` with no `workers` and no `use_multiprocessing`, on data the scan
    cannot see (arrays a loader of another module returns) or on a Python generator (lines 18 and 20), was a
    finding. Keras 3's fit takes no workers argument and its generator adapter starts none; Keras 2 runs one
    worker's generator in the training loop's thread (tf_keras 2.20.1's data_adapter.py). A fit in a file
    that defines a PyDataset, whose own workers Keras 3 reads, stays a finding."""
    found = _scan(tmp_path, "fit", "tensorflow=2.20")
    assert not {18, 20} & set(_lines(found, "tf.data-loader-parallelism", "train.py")), found
    sequence = _scan(tmp_path, "fit_sequence", "tensorflow=2.20")
    assert _lines(sequence, "tf.data-loader-parallelism", "train.py") == [18], sequence


def test_options_that_turn_ordering_off_reach_the_parallel_map(tmp_path):
    """google-deepmind/dm-haiku (1 miss, RULES X4-2): a parallel `map` without a `deterministic` argument in a
    pipeline whose `tf.data.Options` set `experimental_deterministic = False` (applied with `with_options`)
    may yield out of order, as `deterministic=False` does; the scan read only the argument. A map that says
    `deterministic=True`, and one whose options leave ordering on, stay silent."""
    found = _scan(tmp_path, "options", "tensorflow=2.20")
    assert _lines(found, "tf.data-deterministic-false", "dataset.py") == [17], found


def test_a_distributions_sample_is_a_random_draw_in_a_mapped_function(tmp_path):
    """google-research/big_transfer (1 miss, RULES R3): a parallel `map` of a mixup whose weight is
    `tfp.distributions.Beta(a, a).sample([])` draws random numbers, but the rule that reads the mapped
    function for random draws knew no distribution's `sample`: it ruled the stage out. A map that draws
    nothing stays ruled out, also when its element is named `sample` (dm-haiku's mnist_gan `_preprocess`)."""
    found = _scan(tmp_path, "mixup", "tensorflow=2.20")
    assert _lines(found, "tf.data-loader-parallelism", "input_pipeline.py") == [21], found


def test_a_seed_the_program_draws_unseeded_is_no_seeding_fix(tmp_path):
    """affinelayer/pix2pix-tensorflow (3 misses, RULES X2-2): `tf.set_random_seed(a.seed)` counted as the
    seeding fix, but when `--seed` is not given the program sets `a.seed = random.randint(...)`, a value that
    differs from run to run; the random flip and dropout it made silent are findings. The same program with
    a fixed seed stays silent."""
    drawn = _scan(tmp_path, "seed_drawn", "tensorflow=2.20")
    assert _lines(drawn, "tf.random-seeds", "train.py") == [14, 15], drawn
    fixed = _scan(tmp_path, "seed_fixed", "tensorflow=2.20")
    assert _lines(fixed, "tf.random-seeds", "train.py") == [], fixed


def test_a_subclass_built_through_its_modules_name(tmp_path):
    """r9y9/wavenet_vocoder (1 miss, RULES C2.3/W1): `from pkg import conv` then `conv.Conv1d(...)` in a helper
    function builds the code base's subclass of `nn.Conv1d`; the scan knew such subclasses only when imported
    by their own name (`from pkg.conv import Conv1d`), so every dilated convolution the helper builds was
    silent."""
    found = _scan(tmp_path, "modattr", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "modules.py") == [8], found


def test_fit_on_arrays_in_memory_runs_no_keras_worker(tmp_path):
    """shenweichen/DeepCTR (8 false alarms of the second corpus, RULES R3): `Model.fit` of a dict of NumPy
    columns (a comprehension, returned by a function of the file and unpacked) or of NumPy arrays, with
    validation arrays in a tuple, runs no Python generator or Sequence: Keras slices the arrays itself, and
    no worker of `fit` or of a PyDataset runs. Generators stay findings (the fixture's lines 18 and 20)."""
    found = _scan(tmp_path, "fit", "tensorflow=2.20")
    assert not {31, 32} & set(_lines(found, "tf.data-loader-parallelism", "train.py")), found


def test_a_jit_of_a_function_with_no_gemm_leaves_nothing_to_autotune(tmp_path):
    """google/maxtext (13 false alarms of the sixteenth corpus, RULES J1-1): `jax.jit` of a function that only
    builds constants (`jnp.zeros`), updates a copy (`.at[0].set`), draws random numbers, or a library function
    such as `jax.random.fold_in`, was reported for XLA's autotuning, which chooses kernels only for GEMMs,
    convolutions and fusions whose candidates add in different orders. Such jits (decorated, through
    `partial(jax.jit, ...)`, or called on a function or a class's method of the file; a `tree_map` of a lambda
    that only copies; a list built in a loop) are silent; a jit whose function takes a gradient, a `@` product
    or a `jnp.dot` stays a finding."""
    found = _scan(tmp_path, "jit_bodies", "jax=0.8")
    assert [f.line for f in found if f.record == "jax.xla-autotuning" and Path(f.path).name == "step.py"
            and not f.text.startswith("operator @")] == [29, 35, 40, 40, 53, 83, 83], found  # a module of JAX only: its `@` too


def test_jax_sent_to_a_tpu_or_the_cpu_runs_no_gpu_kernel(tmp_path):
    """gordicaleksa/get-started-with-JAX (14 false alarms of the fifteenth corpus, RULES H5-2): a notebook that
    calls `jax.tools.colab_tpu.setup_tpu()` runs its later cells on the Colab's TPU, where XLA's GPU autotuner,
    cuBLAS and NCCL never run; the GPU records were findings there. So are programs that set JAX_PLATFORMS to
    "cpu" before importing JAX, or `jax.config.update("jax_platform_name", "cpu")`. Calls before the switch,
    and an environment variable set after JAX is imported (JAX has read it then), stay findings."""
    tpu = _scan(tmp_path, "jax_tpu", "jax=0.8")
    assert _lines(tpu, "jax.xla-gemm-conv-attention", "tutorial.py") == [6], tpu
    cpu = _scan(tmp_path, "jax_cpu", "jax=0.8")
    assert _lines(cpu, "jax.xla-gemm-conv-attention", "train.py") == [], cpu
    late = _scan(tmp_path, "jax_cpu_late", "jax=0.8")
    assert _lines(late, "jax.xla-gemm-conv-attention", "train.py") == [8], late


def test_a_jit_only_traced_or_lowered_for_its_cost_never_runs(tmp_path):
    """google/maxtext (4 false alarms of the sixteenth corpus, RULES J1-2 and the fifteenth's H5-3): `jax.jit(f)`
    whose result is only traced for shapes (`.eval_shape`) or lowered and compiled to read `cost_analysis()` (or its
    text) runs no executable, so no autotuned kernel reaches a result. A compiled program that is kept (and may be
    called), and a jit that is called, stay findings."""
    found = _scan(tmp_path, "jit_traced", "jax=0.8")
    assert _lines(found, "jax.xla-autotuning", "cost.py") == [6, 13, 14], found


def test_a_seed_from_an_option_with_a_number_default_is_the_ops_own_seed(tmp_path):
    """salesforce/jaxformer (a false alarm of the sixteenth corpus, RULES R2): `shuffle(seed=args.seed)` where the
    file's argparse option `--seed` defaults to a number (or absl's `DEFINE_integer` does) gives the op its own seed
    in every run, but was a `possible` finding. An option whose default is None stays one."""
    found = _scan(tmp_path, "seed_option", "tensorflow=2.20")
    assert _lines(found, "tf.random-seeds", "train.py") == [16], found


def test_a_dot_in_a_pallas_kernel_is_no_xla_gemm(tmp_path):
    """google/maxtext (4 false alarms of the sixteenth corpus, RULES J1-2): a `jnp.dot` inside the kernel a file hands
    to `pl.pallas_call` (here through `functools.partial`, bound to a name) is lowered by Pallas itself, with the
    block shapes the code fixes: XLA picks no library GEMM and autotunes nothing there. The same dot outside the
    kernel stays a finding."""
    found = _scan(tmp_path, "pallas", "jax=0.8")
    assert _lines(found, "jax.xla-gemm-conv-attention", "kernel.py") == [18], found
    assert _lines(found, "jax.xla-autotuning", "kernel.py") == [18], found


def test_a_convolution_of_a_placeholder_runs_no_backprop_to_data(tmp_path):
    """davidsandberg/facenet (2 false alarms of the fifteenth corpus, RULES Y1-4) and allenai/bilm-tf: a network's
    first TF 1 convolution applied to a `tf.placeholder` (directly, or through a function every caller of which
    passes it) needs no gradient for its input, and the session runs only what the train op needs: its
    backprop-to-data kernel never runs. The second layer's convolution, of a computed tensor, stays a finding."""
    found = _scan(tmp_path, "conv_placeholder", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-conv-backprop-data", "train.py") == [11], found


def test_a_running_count_of_a_comparison_method_is_exact(tmp_path):
    """crowsonkb/k-diffusion (a false alarm of the sixteenth corpus, RULES R2): `dists.ge(0).cumsum(dim=0)` counts a
    boolean mask, whose sums are exact integers in any order; the scan knew comparisons written with operators
    (`dists >= 0`) but not the tensor methods (`.ge`, `.isfinite`). A cumsum of float values stays a finding."""
    found = _scan(tmp_path, "mask_counts", "torch=2.11")
    assert _lines(found, "torch.cumsum", "model.py") == [13], found


def test_a_module_imported_by_a_name_built_at_run_time_is_run_by_its_importer(tmp_path):
    """wubinzzu/NeuRec (19 false alarms of the seventeenth corpus, RULES R5): main.py sets `tf.set_random_seed(2017)`
    and builds the model `importlib.import_module("model.general_recommender." + name)` names, a configuration's
    choice; the scan saw no import of the model files, so no program ran them and the seed covered none of their
    random ops. Any module of a package so named (a namespace package too) is now imported by that program, and
    its classes, taken by `getattr` from the imported module, are not classes nothing builds: the optimizer's
    default gradient gating stays a finding."""
    found = _scan(tmp_path, "import_by_name", "tensorflow=2.20")
    assert _lines(found, "tf.random-seeds", "MF.py") == [], found
    assert _lines(found, "tf.gradient-gating", "MF.py") == [10], found


def test_a_method_the_code_bases_class_defines_is_its_own(tmp_path):
    """snap-stanford/pretrain-gnns (4 false alarms of the eighteenth corpus, RULES C3): `batch.cumsum(key, item)` on
    an instance of the code base's `Batch(Data)` class, and `self.cumsum(...)` inside it, call the class's own
    `cumsum` (Python looks in the class before its bases), not `Tensor.cumsum`; a base of another library left the
    receiver unknown, a possible finding. A tensor's cumsum, and one of a receiver nothing shows, stay findings."""
    found = _scan(tmp_path, "own_method", "torch=2.11")
    assert _lines(found, "torch.cumsum", "batch.py") == [26, 26], found


def test_a_collective_sum_of_integer_counts_is_exact(tmp_path):
    """google/brax (a false alarm of the nineteenth corpus, RULES P4-1): `step = jax.lax.psum(step, axis)` where every
    other value of `step` is cast to `jnp.int32` sums integers, exact in any order and on any reduction path (NVLS
    included); the collective rebinding the name it sums hid that. A psum of a float sum stays a finding."""
    found = _scan(tmp_path, "psum_counts", "jax=0.8")
    assert _lines(found, "jax.collective-nvls", "stats.py") == [12], found


def test_a_function_called_only_inside_if_false_never_runs(tmp_path):
    """Hvass-Labs/TensorFlow-Tutorials (twentieth corpus, 3 false alarms, RULES R4): a helper that a script
    repository calls only inside `if False:` (the notebook's "Don't execute this!" block) was reported, though
    CPython does not even compile that block. Its use there is no use, across files too (`if 0:`); a helper
    also called in live code stays a finding."""
    found = _scan(tmp_path, "never_taken", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "train.py") == []
    assert _lines(found, "torch.cudnn-convolution", "helpers.py") == [9]


def test_a_standalone_keras_layer_runs_the_rules_of_its_tensorflow_records(tmp_path):
    """experiencor/keras-yolo2 (twenty-first corpus, 9 false alarms, RULES Y1-3): `from keras.layers import
    MaxPooling2D` (Keras 3 on TensorFlow) is answered by TensorFlow's max-pool record, but only the rules of Keras's
    own records ran on it, so `windows-do-not-overlap` (which `tf.keras.layers.MaxPooling2D` gets) never did. A pool
    whose windows overlap stays a finding."""
    found = _scan(tmp_path, "keras_pool", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-maxpool-backprop", "train.py") == [7]


def test_a_backbone_that_loads_its_weights_as_it_is_built(tmp_path):
    """experiencor/keras-yolo2 (twenty-first corpus, 70 false alarms, RULES X3-1): a feature extractor's
    `__init__` builds a functional `Model` of its layers and loads a whole set of weights into it at once
    (`self.extractor.load_weights(path)`): every construction overwrites the drawn initial weights. A load by name
    or no load keeps the finding."""
    found = _scan(tmp_path, "keras_backbone", "tensorflow=2.20")
    assert _lines(found, "keras.unseeded-random", "backend.py") == [18, 26]


def test_indices_that_are_a_permutation_never_repeat(tmp_path):
    """luchris429/purejaxrl and Coder-Yu/SELFRec (twenty-first corpus, 13 + 4 false alarms, RULES R3): a gather at
    `jax.random.permutation(key, n)` of a count (a configuration value, a product of them), at
    `tf.random.shuffle(tf.range(n))`, or at one scalar index writes each row of its gradient once. A permutation of
    values that may repeat, or drawn indices, stay findings."""
    found = _scan(tmp_path, "permuted", "jax=0.8,tensorflow=2.20")
    assert _lines(found, "jax.gather-backward", "train.py") == [11]
    assert _lines(found, "tf.gather-backprop", "train.py") == [18]


def test_a_pool_whose_stride_defaults_to_a_window_of_any_size_tiles(tmp_path):
    """kuleshov/audio-super-res (twenty-first corpus, 2 false alarms, RULES Y1-3): `MaxPooling1D(pool_size=
    self.block_size)` leaves `strides` at its default, the window itself, so the windows tile whatever the size the
    code does not show; only a literal size was read. An explicit smaller stride stays a finding."""
    found = _scan(tmp_path, "pool_default", "tensorflow=2.20,torch=2.11")
    assert _lines(found, "tf.cudnn-maxpool-backprop", "layers.py") == [9]


def test_tf_app_run_calls_the_module_main(tmp_path):
    """david-gpu/srez (twenty-second corpus, 13 misses): `tf.app.run()` with no `main=` calls the `__main__` module's
    `main`, which no name in the code calls, so the whole model was taken for code nothing runs (notes). A function
    nothing calls stays a note."""
    found = _scan(tmp_path, "app_run", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-conv-backprop-filter", "model.py") == [6]


def test_a_class_default_every_construction_overrides(tmp_path):
    """ajbrock/BigGAN-PyTorch (twenty-second corpus, 5 false alarms, RULES C2.7): `def __init__(self, ...,
    which_conv=nn.Conv2d)` whose every construction (`layers.GBlock(..., which_conv=conv)`, by keyword or position)
    passes the parameter: the default is never taken, as a function's is. A class built without it keeps the
    finding."""
    found = _scan(tmp_path, "class_defaults", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "layers.py") == [11]


def test_a_partial_whose_later_calls_add_only_the_input(tmp_path):
    """ajbrock/BigGAN-PyTorch (twenty-second corpus, 12 false alarms, RULES R2): `functools.partial(F.interpolate,
    scale_factor=2)` handed to a block of another file that keeps it as `self.upsample` and calls it as
    `self.upsample(h)`, or held in a name called with the input: the op runs with its default mode (nearest), which
    rules the interpolation records out. A later call that adds `mode=` keeps them (possible)."""
    found = [f for f in _scan(tmp_path, "partial_calls", "torch=2.11") if f.record.startswith("torch.interpolate")]
    assert sorted({f.line for f in found if Path(f.path).name == "model.py"}) == [12], found


def test_tf1_random_crop_is_tf_image_random_crop(tmp_path):
    """Hvass-Labs/TensorFlow-Tutorials and taki0112/UGATIT (twentieth and twenty-first corpora, 2 misses): TF 1's
    `tf.random_crop` is `tf.image.random_crop` (`tf.compat.v1.random_crop is tf.image.random_crop` in the 2.21
    wheel), so an unseeded one is the unseeded-random source; a call with `seed=` is not."""
    found = _scan(tmp_path, "tf1_crop", "tensorflow=2.20")
    assert _lines(found, "tf.random-seeds", "augment.py") == [4]


def test_keras_convolution2d_is_conv2d(tmp_path):
    """titu1994/Neural-Style-Transfer (twenty-fourth corpus, 218 misses): Keras's `Convolution2D` is the `Conv2D`
    class under its second name (`keras.layers.Convolution2D is keras.layers.Conv2D` in the keras 3.15.1 wheel),
    so it has Conv2D's records; the knowledge base listed only the first name."""
    found = _scan(tmp_path, "keras_convolution", "tensorflow=2.20")
    assert {f.record for f in found if f.line == 6} >= {"tf.cudnn-conv-backprop-filter", "tf.cudnn-autotuning",
                                                       "keras.unseeded-random"}, found


def test_keras2_layer_modules_and_a_script_that_loads_its_model(tmp_path):
    """titu1994/Neural-Style-Transfer (twenty-fourth corpus, 154 misses and 32 false alarms): `from
    keras.layers.convolutional import Convolution2D` is Keras 2's module of the class keras.layers exports (RULES
    D5-1), so it has Conv2D's records; and a script that builds `model = Model(ip, x)` at module level and loads
    a whole set of weights into it (`model.load_weights(weights)`) overwrites the drawn initial weights."""
    found = _scan(tmp_path, "keras2_paths", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-autotuning", "network.py") == [7, 9]
    assert _lines(found, "keras.unseeded-random", "network.py") == []


def test_a_jit_of_einops_rearrange_holds_no_gemm(tmp_path):
    """google/jax-cfd (twenty-fourth corpus, 2 false alarms, RULES J1-1): a jit whose body is one
    `einops.rearrange` (reshape and transpose: a copy) compiles nothing the autotuner chooses; an `einops.reduce`
    (a mean) stays a finding."""
    found = _scan(tmp_path, "jit_einops", "jax=0.8")
    assert [f.line for f in found if f.record == "jax.xla-autotuning" and Path(f.path).name == "tiling.py"
            and not f.text.startswith("operator @")] == [12]


def test_an_op_whose_result_is_detached_at_once_runs_no_backward(tmp_path):
    """HobbitLong/CMC (twenty-fourth corpus, RULES R4): `torch.index_select(self.memory_l, 0, idx).detach()` passes
    no gradient back through the gather; the same gather from a parameter, not detached, stays a finding."""
    found = _scan(tmp_path, "detached", "torch=2.11")
    assert _lines(found, "torch.index-select-backward", "nce.py") == [13]


def test_matmul_in_a_module_whose_only_array_library_is_jax(tmp_path):
    """probml/dynamax (twenty-fifth corpus, 190 misses): `F @ m` on parameters nothing annotates, in a module that
    imports `jax.numpy` and no other array library, multiplies JAX arrays; the scan needed an operand visibly made
    by JAX. A module that imports NumPy too keeps the old reading."""
    found = _scan(tmp_path, "jax_only", "jax=0.8")
    assert set(_lines(found, "jax.xla-gemm-conv-attention", "kalman.py")) == {6}
    assert _lines(_scan(tmp_path, "jax_numpy", "jax=0.8"), "jax.xla-gemm-conv-attention", "mixed.py") == []


def test_a_fix_set_only_when_cuda_is_available_holds_on_the_gpu(tmp_path):
    """jxhe/vae-lagging-encoder (twenty-sixth corpus, 20 false alarms, RULES R5): `if args.cuda:
    torch.backends.cudnn.deterministic = True`, with `args.cuda = torch.cuda.is_available()`, holds in every run
    that reaches a cuDNN kernel (where the test fails the program runs on the CPU), so it is no conditional fix. A
    fix under a command-line option stays conditional."""
    found = _scan(tmp_path, "cuda_guard", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "image.py") == []
    assert _lines(found, "torch.cudnn-convolution", "other.py") == [12]


def test_jax_sent_to_the_cpu_in_the_main_block_before_anything_runs(tmp_path):
    """google/jaxopt's examples (twenty-eighth corpus, 26 false alarms, RULES R4): `jax.config.update(
    "jax_platform_name", "cpu")` as the `__main__` block's first statement runs every function of the file on the
    CPU, also those defined above it, when the module level before it only defines things or calls the host's
    modules (absl's `flags.DEFINE_float`, as jaxopt's SVM examples do). A product computed at import, before the
    block, stays a finding."""
    found = _scan(tmp_path, "jax_cpu_main", "jax=0.8")
    assert _lines(found, "jax.xla-gemm-conv-attention", "svm.py") == []
    assert 4 in _lines(found, "jax.xla-gemm-conv-attention", "eager.py")


def test_an_op_whose_result_is_read_at_once_as_a_value_runs_no_backward(tmp_path):
    """znxlwm/tensorflow-MNIST-GAN-DCGAN (twenty-ninth corpus, RULES R4): `tf.image.resize_images(images, [64,
    64]).eval()` resizes the data once and hands back a NumPy array, so no gradient flows through the resize; a
    PyTorch gather read only as `.std().item()` alike. The same ops kept in the graph stay findings."""
    found = _scan(tmp_path, "read_at_once", "torch=2.11,tensorflow=2.20")
    assert _lines(found, "tf.resize-bilinear-backprop", "gan.py") == [10]
    assert _lines(found, "torch.index-select-backward", "gather.py") == [12]


def test_a_framework_name_imported_through_a_module_of_the_code_base(tmp_path):
    """soobinseo/Transformer-TTS (thirtieth corpus, 2 misses): `from preprocess import DataLoader`, where
    preprocess.py imports it from torch.utils.data, is torch's DataLoader (Python binds the same object); so is
    `F` of `from prep import F`. A module that defines a class of the same name keeps its own."""
    found = _scan(tmp_path, "reexported", "torch=2.11")
    assert _lines(found, "torch.data-loader-workers", "train.py") == [6]
    assert _lines(found, "torch.interpolate-bilinear-backward", "train.py") == [8]
    assert _lines(found, "torch.data-loader-workers", "train_own.py") == []


def test_a_function_handed_to_map_and_batch_runs_in_the_pipeline(tmp_path):
    """taki0112/StarGAN-Tensorflow (thirtieth corpus, 2 false alarms, RULES R4): `dataset.apply(map_and_batch(
    data.image_processing, n))` (TF 1's fused stage, `tf.contrib.data` / `tf.data.experimental`) runs the method,
    and the function it calls in another file, in the input pipeline as `.map(fn)` does: no gradient flows through
    their resizes. The resize of the model's output stays a finding."""
    found = _scan(tmp_path, "map_and_batch", "tensorflow=2.20")
    assert _lines(found, "tf.resize-bilinear-backprop", "data.py") == []
    assert _lines(found, "tf.resize-bilinear-backprop", "train.py") == [11]


def test_the_indices_of_a_sort_and_a_reversed_range_never_repeat(tmp_path):
    """snap-stanford/GraphRNN (twenty-fifth corpus, 14 false alarms, RULES R3): `_, sort_index = torch.sort(lengths)`
    is the sorting permutation, and `idx = [i for i in range(n - 1, -1, -1)]`, then `Variable(torch.LongTensor(idx))`,
    a reversed range: neither repeats an index, so the gathers' backward writes each row once. Indices a parameter
    brings in (`picked = picked.cuda()`) may repeat: that gather stays a finding."""
    found = _scan(tmp_path, "sort_indices", "torch=2.11")
    assert _lines(found, "torch.index-select-backward", "train.py") == [15]


def test_a_program_that_differentiates_only_with_respect_to_its_input(tmp_path):
    """titu1994/Neural-Style-Transfer (twenty-fourth corpus, 109 false alarms, RULES R4): a script whose only
    differentiation is `K.gradients(loss, combination_image)` of a placeholder, and which trains nothing, computes
    no filter or bias gradient: those records are ruled out, the gradient passed back to the image (backprop-data)
    stays. A script that fits the same network keeps them; so does a `tf.nn.conv2d` whose own filter is what the
    tape differentiates."""
    found = _scan(tmp_path, "input_gradients", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-conv-backprop-filter", "style.py") == []
    assert _lines(found, "tf.bias-add-backprop", "style.py") == []
    assert _lines(found, "tf.cudnn-conv-backprop-data", "style.py") == [10, 11]
    assert _lines(found, "tf.cudnn-conv-backprop-filter", "train.py") == [5]
    assert _lines(found, "tf.cudnn-conv-backprop-filter", "handmade.py") == [9]
    # an image made a variable and minimized through a wrapper (style transfer by L-BFGS): the first layer's data
    # gradient is the one the program asks for, so it stays a finding
    assert _lines(found, "tf.cudnn-conv-backprop-data", "lbfgs.py") == [6]


def test_the_coordinates_of_a_mask_through_tensorflows_own_modules(tmp_path):
    """google/seq2seq (twenty-third corpus, 4 false alarms, RULES R3): `math_ops.cast(array_ops.where(mask),
    dtypes.int32)`, TensorFlow's own spelling of `tf.cast(tf.where(mask))`, is one coordinate row per true element:
    a `scatter_nd` at those rows writes each once. The same coordinates flattened for a gather may repeat (a mask
    of two dimensions gives each row's index again), so that gather stays a finding."""
    found = _scan(tmp_path, "tf_private_where", "tensorflow=2.20")
    assert _lines(found, "tf.scatter-nd", "helper.py") == []
    assert _lines(found, "tf.gather-backprop", "helper.py") == [12]


def test_a_dataset_built_for_another_split_than_its_augmentations_branch(tmp_path):
    """jfzhang95/pytorch-deeplab-xception's datasets (thirty-first corpus, RULES R3): `Seg(args, split="val")` sets
    `self.split` to "val", so `if self.split == "train": return self.transform_tr(sample)` (the random
    augmentation) never runs in its `__getitem__`: the validation loader's workers draw nothing. The training
    loader, built with split="train", stays a finding."""
    found = _scan(tmp_path, "split_literal", "torch=2.11")
    assert _lines(found, "torch.data-loader-workers", "train.py") == [7]


def test_a_keras_models_first_convolution_on_its_data_input(tmp_path):
    """tensorflow/privacy's tutorials, image-segmentation-keras, keras-yolo2 (thirty-first, twenty-third and
    twenty-first corpora, RULES Y1-4): a model's first convolution gets the data (`Conv2D(...)(keras.Input(...))`,
    the first layer of a `Sequential`, a layer given `input_shape=`): the gradient passed back to the data is never
    used. The second layers stay findings, and so does a discriminator's first layer (a generator's gradient flows
    back through it)."""
    found = _scan(tmp_path, "first_layer", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-conv-backprop-data", "classify.py") == [5, 9]
    assert _lines(found, "tf.cudnn-conv-backprop-data", "gan.py") == [6]
    # through layers with no weights (`ZeroPadding2D` of the input) and a helper every call hands the input
    # (divamgupta/image-segmentation-keras's encoders, twenty-third corpus, 6 false alarms)
    assert _lines(found, "tf.cudnn-conv-backprop-data", "padded.py") == [15]
    # through `Lambda` layers whose functions make no weights, reassigned under `if`s (ssd_keras, fiftieth corpus)
    assert _lines(found, "tf.cudnn-conv-backprop-data", "lambdas.py") == [13, 32]


def test_keras_modules_a_builder_is_handed_by_its_caller(tmp_path):
    """keras-team/keras-applications and qubvel's efficientnet (thirty-second and twenty-fifth corpora, 371 and 28
    misses, RULES AA6-1, AH6-1): a model file that never imports Keras takes its modules from its caller, `backend,
    layers, models, keras_utils = get_submodules_from_kwargs(kwargs)` into module globals its helpers read; the
    entry points hand Keras's in, so `layers.Conv2D(...)` is Keras 3's Conv2D."""
    found = _scan(tmp_path, "injected_keras", "tensorflow=2.20")
    assert _lines(found, "tf.cudnn-conv-backprop-filter", "net.py") == [10]
    assert _lines(found, "keras.unseeded-random", "net.py") == [10]


def test_global_1d_pooling_and_a_scatter_at_topk_indices(tmp_path):
    """microsoft/Swin-Transformer and lucidrains/x-transformers (thirty-third corpus, 4 and 6 false alarms, RULES R3):
    `nn.AdaptiveAvgPool1d(1)` is a mean (adaptive_avg_pool1d runs the 2-D op at output (1, 1)), and
    `probs.scatter_(1, ind, val)` with `val, ind = torch.topk(logits, k)` writes k distinct positions of each row. A
    pool to 7 bins and a scatter at random indices stay findings."""
    found = _scan(tmp_path, "topk_pool1d", "torch=2.11")
    assert _lines(found, "torch.adaptive-avg-pool1d-backward", "head.py") == [9]
    assert _lines(found, "torch.scatter-src-tensor", "head.py") == [25]


def test_a_script_repositorys_program_in_a_folder_with_an_init_file(tmp_path):
    """ZhaoJ9014/face.evoLVe (thirty-third corpus, 12 false alarms, RULES R4): in a code base no packaging file
    installs, `align/detect.py`'s `__main__` block is a program even though its folder has an `__init__.py`; it
    places nothing on a GPU, so the convolutions only it runs run on the CPU. A program beside it that moves its
    model to CUDA keeps its finding."""
    found = _scan(tmp_path, "cpu_subpackage", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "nets.py") == [7]
    assert [Path(f.path).parent.name for f in found if f.record == "torch.cudnn-convolution"] == ["train"]


def test_a_class_nothing_builds_in_a_module_a_script_star_imports(tmp_path):
    """snap-stanford/GraphRNN (twenty-fifth corpus, 17 false alarms, RULES R4, L1-1): main.py's `from model import *`
    re-exports model.py's names only to main.py, which is scanned: a class that no code names (`CNNDecoder`, built only
    by a commented-out line) never runs, as in a module imported by name. The class main.py builds keeps its finding."""
    found = _scan(tmp_path, "star_script", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "model.py") == [8]


def test_an_all_reduce_of_integers_or_a_maximum_is_exact(tmp_path):
    """karpathy/nanochat (thirty-fourth corpus, 11 false alarms, RULES R3, P4-1): NVLS makes an all-reduce differ by
    the order of the switch's floating-point additions, so an all-reduce of a tensor made with an integer dtype (also
    summed into in place, which keeps the dtype) and one whose op is `ReduceOp.MAX` are exact. The sum of a float
    loss stays a finding."""
    found = _scan(tmp_path, "int_all_reduce", "torch=2.11")
    assert _lines(found, "torch.distributed-nvls", "evaluate.py") == [11], found


def test_a_scatter_of_one_value_or_of_ones_through_a_conversion(tmp_path):
    """RUCAIBox/RecBole (thirty-fourth corpus, 5 false alarms, RULES R3, AJ4-1): `scatter_(2, index, src=zeros_like(i)
    .to(dtype=x.dtype))` writes one value from every duplicate index, and `scatter_add_` of `ones_like(i).to(...)`
    counts: both exact in any order. A scatter and a scatter_add of gathered logits stay findings."""
    found = _scan(tmp_path, "constant_scatter", "torch=2.11")
    assert _lines(found, "torch.scatter-src-tensor", "rerank.py") == [18], found
    assert _lines(found, "torch.scatter-add", "rerank.py") == [17], found


def test_a_module_that_names_itself_in_super_and_runs_under_no_grad(tmp_path):
    """yl4579/StyleTTS2 (thirty-fourth corpus, 4 false alarms, RULES R4): SineGen, called only as a held module under
    `torch.no_grad()`, records no gradient, though its `__init__` names the class in Python 2's
    `super(SineGen, self).__init__()`: that names the class's own bases, not the class as a value that may run
    anywhere. Its linear interpolation runs no backward; the convolution the program trains stays a finding."""
    found = _scan(tmp_path, "super_named", "torch=2.11")
    assert _lines(found, "torch.interpolate-linear-backward", "hifigan.py") == [], found
    assert _lines(found, "torch.cudnn-convolution", "hifigan.py") == [35], found


def test_a_library_folder_whose_modules_only_declare_at_import(tmp_path):
    """google-research/t5x's `t5x/examples` (thirty-fifth corpus, 38 misses, RULES S1): a folder of model modules that
    the trainer outside it imports. A module whose only module-level calls declare (a logger, a dataclass field in a
    class body) is no script that `python module.py` runs, so it makes no entry point, and the scan does not read the
    other modules as code no entry point runs: their findings stay."""
    found = _scan(tmp_path, "declaring_library", "torch=2.11")
    assert _lines(found, "torch.cudnn-convolution", "layers.py") == [10], found
    assert _lines(found, "torch.cudnn-convolution", "other.py") == [10], found


def test_framework_names_a_star_import_passes_on_from_a_code_base_module(tmp_path):
    """bojone/bert4keras (thirty-fifth corpus, 70 misses, RULES C2.7, O4-1): layers.py says `from keras.layers import *`
    and models.py `from bert4keras.layers import *`, so models.py's `Dense` is Keras's, built with `Dense(4)` and
    named as a value in `self.apply(x, layer=Dense, ...)`, which builds it. Read file by file it was nothing."""
    found = _scan(tmp_path, "star_chain", "tensorflow=2.20")
    assert _lines(found, "keras.unseeded-random", "models.py") == [9, 10], found


def test_empty_tensors_of_a_custom_ops_fake_implementation(tmp_path):
    """pytorch/torchtitan (thirty-fifth corpus, 7 false alarms, RULES R3, AK3-2): a custom op's fake implementation
    (`@op.register_fake`, `@torch.library.register_fake("ns::op")`) runs only on FakeTensors while tracing, so its
    `new_empty` and `torch.empty` allocate nothing anything reads. The op's real implementation, whose empty tensor
    is read, stays a finding."""
    found = _scan(tmp_path, "fake_impl", "torch=2.11")
    assert _lines(found, "torch.uninitialized-memory", "ops.py") == [6], found


def test_a_code_bases_own_context_manager_that_turns_gradients_off(tmp_path):
    """suno-ai/bark (thirty-fifth corpus, 10 false alarms, RULES R4, T7): the model runs only inside
    `with _inference_mode():`, a `@contextlib.contextmanager` of the same file that yields inside
    `torch.inference_mode()`, so the helper it calls there runs no backward: its bilinear interpolation is no
    finding. (The model's embedding is still reported: bark's models come out of a dictionary, and a module's
    construction is judged apart from where it is called.)"""
    found = _scan(tmp_path, "own_context", "torch=2.11")
    assert _lines(found, "torch.interpolate-bilinear-backward", "model.py") == [], found
    assert _lines(found, "torch.embedding-backward", "model.py") == [8], found


def test_a_scatter_of_a_python_number_held_in_a_name(tmp_path):
    """huggingface/pytorch-image-models (thirty-sixth corpus, 6 `possible` false alarms, RULES R2): `scatter_(1, x,
    on_value)` where `on_value=1.` is a parameter, or `on_val = 1.0 - smoothing + off_val` of a `float` parameter, is
    the scalar form, which no scatter record names. A scatter of a tensor of weights stays a finding."""
    found = _scan(tmp_path, "scalar_scatter", "torch=2.11")
    assert sorted({f.line for f in found if f.record.startswith("torch.scatter")}) == [19], found


def test_a_mapped_function_that_calls_a_preprocessing_layer_which_draws_nothing(tmp_path):
    """fchollet/deep-learning-with-python-notebooks (thirty-seventh corpus, 17 `possible` false alarms, RULES R3): a
    parallel `tf.data` map of `lambda x, y: (text_vectorization(x), y)`, where the name holds a `TextVectorization`
    layer, draws no random numbers, so the order the calls finish in changes nothing. A map through a layer of random
    augmentation stays a finding."""
    found = _scan(tmp_path, "fixed_layers", "tensorflow=2.20")
    assert _lines(found, "tf.data-loader-parallelism", "imdb.py") == [13], found


def test_a_cross_entropy_whose_target_is_visibly_one_dimensional(tmp_path):
    """mlfoundations/open_clip (thirty-sixth corpus, 4 `possible` false alarms, RULES R2): `F.cross_entropy(logits,
    labels)` with `labels = torch.arange(n)` takes (N, C) logits (a 1-D class-index target), never the 3-D to 6-D
    form the nll-loss record needs, whatever `logits` is. A loss whose input's rank and target's rank are both unknown
    stays `possible`."""
    found = _scan(tmp_path, "target_rank", "torch=2.11")
    assert _lines(found, "torch.nll-loss", "losses.py") == [15], found


def test_a_subclass_of_a_keras_layer_a_star_import_brings_in(tmp_path):
    """bojone/bert4keras (thirty-fifth corpus, 25 misses, RULES C2.7, O4-1): layers.py defines `class
    Embedding(keras.layers.Embedding)`, and models.py takes it by `from bert4keras.layers import *`, so its
    `layer=Embedding` is Keras's Embedding (the subclass keeps its signature), with the gather of its backward."""
    found = _scan(tmp_path, "star_subclass", "tensorflow=2.20")
    assert _lines(found, "tf.gather-backprop", "models.py") == [9], found


def test_tf1_code_gathers_at_a_range(tmp_path):
    """google-deepmind/trfl (thirty-eighth corpus, 8 false alarms, RULES R3): under `import tensorflow.compat.v1 as
    tf`, `tf.gather(qs, tf.range(0, t - 1))` gathers at indices that never repeat, as under TF 2's import. A gather at
    indices drawn at random stays a finding."""
    found = _scan(tmp_path, "tf1_range", "tensorflow=2.20")
    assert _lines(found, "tf.gather-backprop", "ops.py") == [14], found


def test_a_subclass_whose_base_names_a_framework_module_taken_from_a_code_base_module(tmp_path):
    """bojone/bert4keras (thirty-fifth corpus, 25 misses, RULES C2.7, O4-1): layers.py takes `keras` from the code
    base's own backend module (`from bert4keras.backend import keras`, which imports Keras) and defines `class
    Embedding(keras.layers.Embedding)`: a Keras Embedding, which models.py's `layer=Embedding` builds."""
    found = _scan(tmp_path, "backend_base", "tensorflow=2.20")
    assert _lines(found, "tf.gather-backprop", "models.py") == [9], found
