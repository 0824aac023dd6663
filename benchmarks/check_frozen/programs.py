"""The frozen corpus's programs, in the form benchmarks/check_corpus/run_corpus.py reads
(`--corpus frozen`): name, file in this folder, the library it needs beyond torch (the program
is listed as skipped where it is not installed), extra arguments. Slower ones (JAX compilation,
per-image augmentation) first, so that `--jobs N` overlaps them with the quick ones."""

from __future__ import annotations

PROGRAMS: list[tuple[str, str, str | None, list[str]]] = [
    ("vision_mobilenet_torchvision", "vision_mobilenet_torchvision.py", "torchvision", []),
    ("jax_transformer_dpa", "jax_transformer_dpa.py", "jax", []),
    ("jax_word2vec_scatter", "jax_word2vec_scatter.py", "jax", []),
    ("jax_mlp_dropout_sgd", "jax_mlp_dropout_sgd.py", "jax", []),
    ("moe_topk_router", "moe_topk_router.py", None, []),
    ("simclr_ntxent", "simclr_ntxent.py", None, []),
    ("wav2vec_conv_encoder", "wav2vec_conv_encoder.py", None, []),
    ("translation_transformer_bf16", "translation_transformer_bf16.py", None, []),
    ("nerf_hierarchical", "nerf_hierarchical.py", None, []),
    ("superres_pixelshuffle", "superres_pixelshuffle.py", None, []),
    ("seq2seq_gru_packed", "seq2seq_gru_packed.py", None, []),
    ("distill_kldiv", "distill_kldiv.py", None, []),
    ("dcgan_convtranspose", "dcgan_convtranspose.py", None, []),
    ("unet_bilinear_bce", "unet_bilinear_bce.py", None, []),
    ("vit_patch_mha", "vit_patch_mha.py", None, []),
    ("pointnet_scatter_pool", "pointnet_scatter_pool.py", None, []),
    ("gat_scatter_softmax", "gat_scatter_softmax.py", None, []),
    ("two_tower_sparse_adam", "two_tower_sparse_adam.py", None, []),
]
