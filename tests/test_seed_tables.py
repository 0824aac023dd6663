"""Every cell of the seeds' TensorFlow status tables, checked through kb.status().

A cell passes when the KB's answer agrees with it, or when the record keeps the cell's
claim as a dispute (the seeds disagree with later sources in a few places; the record
then says which it follows and why). Cells are transcribed from shared/seeds/.
"""

from __future__ import annotations

import pytest

import kb
from kb import versions
from kb.query import index

# --- seed 003: NVIDIA tensorflow-determinism README, "Confirmed Current GPU-Specific Sources"
# columns: TF 1.14, 1.15, 2.0 | NGC 19.06+ / TF 2.1 | TF 2.2 | TF 2.3
COLUMNS_003 = [("tf", ("1.14", "1.15", "2.0")), ("tf+ngc", ("2.1", "19.06")), ("tf", ("2.2",)), ("tf", ("2.3",))]
ROWS_003 = {
    "tf.cudnn-autotuning": ["TCD TDP", "TDO", "TDO", "TDO"],
    "tf.cudnn-conv-backprop-filter": ["TCD TDP", "TDO", "TDO", "TDO"],
    "tf.cudnn-conv-backprop-data": ["TCD TDP", "TDO", "TDO", "TDO"],
    "tf.cudnn-maxpool-backprop": ["TCD TDP", "TDO", "TDO", "TDO"],
    "tf.cudnn-ctc-loss": ["NS", "NS", "NS", "TDO"],
    "tf.bias-add-backprop": ["TDP", "TDO", "TDO", "TDO"],
    "tf.xla-reductions": ["NS", "NS", "TDO", "TDO"],
    "tf.fused-softmax-xent": ["NS", "NS", "NS", "NS"],
    "tf.sparse-softmax-xent": ["NS", "NS", "NS", "NS"],
}
# resize bilinear row has its own columns: TF <2.2: NS | NGC 20.03+: TDO | TF 2.3 ?: TDO
CELLS_003 = [
    (record, version, distribution, cell)
    for record, cells in ROWS_003.items()
    for (kind, column), cell in zip(COLUMNS_003, cells)
    for version, distribution in (
        [(v, None) for v in column] if kind == "tf" else [(column[0], None), (column[1], "ngc")]
    )
] + [
    ("tf.resize-bilinear-backprop", v, None, "NS") for v in ("1.14", "1.15", "2.0", "2.1")
] + [
    ("tf.resize-bilinear-backprop", "20.03", "ngc", "TDO"),
    ("tf.resize-bilinear-backprop", "2.3", None, "TDO"),
    # "Historic": reduce_sum / reduce_mean deterministic by default since before 1.12
    ("tf.reduce-sum-mean-historic", "1.12", None, "DEF"),
    ("tf.reduce-sum-mean-historic", "2.3", None, "DEF"),
]

# --- seed 002: research plan, "have deterministic mode?" for TF 1.14-2.0 | TF 2.2 | TF 2.3
COLUMNS_002 = [("1.14", "1.15", "2.0"), ("2.2",), ("2.3",)]
ROWS_002 = {
    "tf.cudnn-autotuning": "Yes Yes Yes",
    "tf.cudnn-conv-backprop-filter": "Yes Yes Yes",
    "tf.cudnn-conv-backprop-data": "Yes Yes Yes",
    "tf.cudnn-maxpool-backprop": "Yes Yes Yes",
    "tf.bias-add-backprop": "Yes Yes Yes",
    "tf.xla-reductions": "No Yes Yes",
    "tf.cudnn-ctc-loss": "No No Yes",
    "tf.fused-softmax-xent": "No No No",
    "tf.sparse-softmax-xent": "No No No",
    "tf.resize-bilinear-backprop": "No Yes Yes",
    "tf.resize-nearest-backprop": "No No No",
    "tf.segment-sum": "No No No",
    "tf.unsorted-segment-sum": "No No No",
    "tf.convert-to-tensor-indexed-slices": "No No No",
    "tf.gather-backprop": "No No No",
    "tf.tfa-dense-image-warp-backprop": "No No No",
    "tf.crop-and-resize-backprop": "No No No",
    "tf.crop-and-resize-backprop-cpu": "No No No",
    "tf.sparse-dense-matmul": "No No No",
    "tf.unsorted-segment-mean-prod-sqrt-n": "No No No",
    "tf.reduce-sum-mean-historic": "Yes Yes Yes",
}
CELLS_002 = [
    (record, version, answer)
    for record, row in ROWS_002.items()
    for column, answer in zip(COLUMNS_002, row.split())
    for version in column
]


def _disputed(record: str, version: str, distribution: str | None, matches) -> bool:
    """True when a dispute of the record covers `version` with a status that `matches`."""
    if distribution:
        return False
    key = versions.release_key(version)
    for dispute in index()["sources"][record]["disputes"]:
        for lo, hi, _, codes, deterministic, *_ in dispute["status"]:
            if versions.contains(lo, hi, key) and matches(set(codes), deterministic):
                return True
    return False


@pytest.mark.parametrize("record, version, distribution, cell", CELLS_003)
def test_seed_003_cell(record: str, version: str, distribution: str | None, cell: str) -> None:
    result = kb.status(record, version, distribution=distribution, device="any")
    (source,) = result.sources
    if cell == "DEF":
        expected_codes, expected_det = set(), True
    else:
        expected_codes, expected_det = (set() if cell == "NS" else set(cell.split())), False

    def matches(codes: set[str], deterministic: bool | None) -> bool:
        return codes == expected_codes and bool(deterministic) == expected_det

    agrees = source.deterministic is not None and matches(set(source.solutions), source.deterministic)
    assert agrees or _disputed(record, version, distribution, matches), (
        f"{record} @ {distribution or 'tf'} {version}: seed says {cell}, KB says "
        f"{source.solutions or 'NS'} deterministic={source.deterministic} and records no dispute"
    )


@pytest.mark.parametrize("record, version, answer", CELLS_002)
def test_seed_002_cell(record: str, version: str, answer: str) -> None:
    result = kb.status(record, version, device="any")
    (source,) = result.sources

    def matches(codes: set[str], deterministic: bool | None) -> bool:
        has_mode = bool(deterministic) or bool(codes)
        return has_mode == (answer == "Yes")

    agrees = source.deterministic is not None and matches(set(source.solutions), source.deterministic)
    assert agrees or _disputed(record, version, None, matches), (
        f"{record} @ {version}: seed 002 says '{answer}', KB says {source.solutions or 'NS'} "
        f"deterministic={source.deterministic} and records no dispute"
    )


def test_cell_counts() -> None:
    assert len(CELLS_003) == 9 * 7 + 8 and len(CELLS_002) == 21 * 5
