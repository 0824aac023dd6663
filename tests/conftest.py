"""Test-run setup: one shared folder for the expensive inputs (tests/shared.py), the order
in which pytest-xdist hands tests to its workers, and which tests are slow.

The process that starts the run (pytest itself, or pytest-xdist's controller) makes the
folder and names it in KB_TESTS_SHARED before any worker starts, so every worker inherits
the same one; it removes it when the run ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import shared

# The longest tests go first, in this order, each to the next free worker (`--dist loadgroup
# --no-loadscope-reorder` in pyproject.toml), so that no worker is left alone with one at the
# end. Tests given the same group read the same made-once input (a probe example's trainings,
# the hostile site) and run one after the other on one worker, so neither waits on the
# other's lock; the browser tests share one chromium. A prefix that matches no test (renamed)
# only loses its place in the order.
FIRST: tuple[tuple[str, str | None], ...] = (
    ("tests/test_probe.py::test_tf_function_backward_plant_names_the_producing_layer", "probe-tensorflow"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run[tensorflow]", "probe-tensorflow"),
    ("tests/test_e2e.py::test_tensorflow_e2e_recipe_gives_identical_weights_on_cpu", None),
    ("tests/test_check_run.py::test_planted_difference_is_caught_named_and_fixed", None),
    ("tests/test_e2e.py::test_jax_e2e_recipe_gives_identical_weights_on_cpu", None),
    ("tests/test_probe.py::test_torch_backward_plant_is_blamed_on_the_consumer", "probe-torch"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run[torch-mix]", "probe-torch"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run[torch-identical]", "probe-torch"),
    ("tests/test_probe.py::test_jax_plant_inside_jit_and_nested_structures", "probe-jax"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run[jax]", "probe-jax"),
    ("tests/test_verify.py::test_tensorflow_cpu_verifier_runs_and_cpu1_removes_the_difference", None),
    ("tests/test_site_browser.py::", "browser"),  # builds the site (built_site) first
    ("tests/test_static_checks.py::test_mypy_finds_no_error", None),  # ~20 s of CPU with no cache (fresh clone)
    ("tests/test_e2e.py::test_code_that_fails_in_the_child_is_an_error_in_its_pair", None),
    ("tests/test_site.py::test_record_text_is_data_not_markup", "hostile-site"),
    ("tests/test_site.py::test_nightly_page_shows_the_planted_report", "hostile-site"),
    ("tests/test_probe.py::test_torch_attention_backward_is_blamed_on_the_functional_call", "probe-attention"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run[torch-attention]", "probe-attention"),
    ("tests/test_probe.py::test_torch_embedding_backward_is_blamed_on_the_embedding_call", "probe-embedding"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run[torch-embedding]", "probe-embedding"),
    ("tests/test_site.py::test_same_data_same_bytes", None),
    ("tests/test_site_ux.py::test_crawl_every_internal_link_and_anchor", None),
    ("tests/test_site_ux.py::test_matrix_rows_and_cells_show_a_records_call_condition", None),
)


# The tests that must stay slow, marked `slow` here (one place, with the reason): the README's test
# command runs the others (`-m "not slow"`: the everyday loop), and its second command, which CI's
# .ci/run and the nightly drift job run too, runs these. Each one's cost is its cause, not its
# inputs: it trains a model run to run in fresh framework processes (each imports PyTorch,
# TensorFlow or JAX: the thing under test is what differs between processes), runs a framework's
# operator catalog, drives a browser, or builds or reads the whole site (every page, the JSON API, mkdocs).
WHOLE_HTML_SITE = "reads the whole HTML site (every page of the real data, built by mkdocs)"
SLOW: tuple[tuple[str, str], ...] = (
    ("tests/test_probe.py::test_torch_backward_plant_is_blamed_on_the_consumer", "trainings"),
    ("tests/test_probe.py::test_torch_attention_backward_is_blamed_on_the_functional_call", "trainings"),
    ("tests/test_probe.py::test_torch_embedding_backward_is_blamed_on_the_embedding_call", "trainings"),
    ("tests/test_probe.py::test_first_only_and_sampled_statistics", "trainings"),
    ("tests/test_probe.py::test_jax_plant_inside_jit_and_nested_structures", "trainings"),
    ("tests/test_probe.py::test_tf_function_backward_plant_names_the_producing_layer", "trainings"),
    ("tests/test_probe_docs.py::test_docs_block_matches_a_fresh_run", "trainings (docs/probe.md's examples)"),
    ("tests/test_probe_blame.py::test_top1_blame_accuracy_on_a_fast_subset_of_real_models", "trainings (real models)"),
    ("tests/test_probe_fingerprint.py::test_tensorflow_matches_the_lane_definition_and_jax", "imports TensorFlow"),
    ("tests/test_probe_guard.py::test_keras_entry_points", "imports TensorFlow; trainings (a Keras model, once per plant)"),
    ("tests/test_e2e.py::test_tensorflow_e2e_recipe_gives_identical_weights_on_cpu", "trainings"),
    ("tests/test_e2e.py::test_jax_e2e_recipe_gives_identical_weights_on_cpu", "trainings"),
    ("tests/test_e2e.py::test_code_that_fails_in_the_child_is_an_error_in_its_pair", "trainings"),
    ("tests/test_verify.py::test_tensorflow_cpu_verifier_runs_and_cpu1_removes_the_difference", "TensorFlow runs"),
    ("tests/test_sweep.py::test_cpu_sweep_finds_the_planted_operators", "an operator sweep"),
    ("tests/test_tf_sweep.py::test_tensorflow_subset_classified", "an operator sweep"),
    ("tests/test_tf_sweep.py::test_keras_subset_per_backend", "an operator sweep per Keras backend"),
    ("tests/test_site_browser.py::", "a browser (Debian's chromium)"),
    ("tests/test_check_run.py::test_planted_difference_is_caught_named_and_fixed",
     "trainings (kb check runs a planted program in four fresh PyTorch processes)"),
    ("tests/test_check_run.py::test_a_short_noise_schedule_is_no_long_scan",
     "a training (kb check's inventory of the corpus's diffusion model, one step in a fresh PyTorch process)"),
    ("tests/test_sweep_branches.py::test_planted_branches_differ_only_where_inputs_collide",
     "an operator sweep (planted branch units, in worker processes)"),
    ("tests/test_site.py::test_same_data_same_bytes", "builds the whole site twice"),
    ("tests/test_notes.py::test_a_sweep_unit", "imports PyTorch twice in fresh processes (builds the unit, lists the worker's units)"),
    ("tests/test_lint_cases.py::test_every_pytorch_branch_case_names_a_known_op_and_call_keys",
     "builds every PyTorch branch unit's inputs"),
    ("tests/test_lint_cases.py::test_every_jax_case_names_a_known_op_and_call_keys",
     "builds every JAX special and branch unit's inputs (arrays of millions of elements)"),
    ("tests/test_site_ux.py::test_crawl_every_internal_link_and_anchor", "builds the HTML site (mkdocs) and follows every link"),
    ("tests/test_site_ux.py::test_matrix_rows_and_cells_show_a_records_call_condition",
     "builds the whole site from a changed copy of the data"),
    # These read pages of the real data's whole HTML site (site_build.built_site: one mkdocs build of every
    # page, made once per run and shared with the browser and crawl tests above); the site tests of the
    # everyday loop build the small project (site_build.copy_mini) or check the generated sources.
    ("tests/test_site.py::test_every_framework_has_a_matrix_and_every_source_a_page", WHOLE_HTML_SITE),
    ("tests/test_site.py::test_nightly_page_without_a_report_says_how_to_make_one", WHOLE_HTML_SITE),
    ("tests/test_site.py::test_no_asset_from_another_host", WHOLE_HTML_SITE),
    ("tests/test_site.py::test_op_json_matches_kb_status", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_bias_add_at_115_says_tdp_and_links_to_its_range", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_legends_list_only_the_symbols_their_table_uses", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_three_answers_read_differently", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_run_tables_never_say_ok_beside_differing_runs", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_pytorch_recipe_seeds_and_says_what_raises", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_no_repository_paths_or_project_jargon_on_user_pages", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_404_page_links_are_relative", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_probe_guide_reaches_the_example_scripts", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_json_api_example_is_the_file_it_names", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_headings_do_not_show_escaped_quotes", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_tables_stay_out_of_the_search_index", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_solutions_page_is_grouped_by_framework", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_home_page_leads_with_the_lookup", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_matrices_are_newest_first_with_identical_neighbours_merged", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_every_cell_is_a_link_with_its_details", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_verified_marks_name_the_run_and_only_its_series", WHOLE_HTML_SITE),
    ("tests/test_site_ux.py::test_every_recipe_block_is_a_program_that_seeds_before_it_uses_the_seed", WHOLE_HTML_SITE),
)


def _slow(nodeid: str) -> bool:
    return any(nodeid.startswith(prefix) for prefix, _ in SLOW)


def pytest_configure(config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(shared.ENV):
        return  # a worker (the controller made the folder), or a caller that chose one
    os.environ[shared.ENV] = tempfile.mkdtemp(prefix="kb-tests-")
    config._kb_shared_made = os.environ[shared.ENV]
    # `kb scan` keeps its readings here, not in the home folder of whoever runs the tests (kb/scan/filecache.py)
    os.environ["KB_SCAN_CACHE"] = os.path.join(os.environ[shared.ENV], "scan-cache")


def pytest_unconfigure(config) -> None:
    made = getattr(config, "_kb_shared_made", None)
    if made:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(shared.ENV, None)
        os.environ.pop("KB_SCAN_CACHE", None)


def _first(nodeid: str) -> int:
    """The place of a test in FIRST, or len(FIRST) for the rest."""
    for number, (prefix, _) in enumerate(FIRST):
        if nodeid.startswith(prefix):
            return number
    return len(FIRST)


def pytest_collection_modifyitems(config, items) -> None:
    import pytest

    for item in items:
        if _slow(item.nodeid):
            item.add_marker(pytest.mark.slow)
    if len(items) > 1000:  # the whole suite: a SLOW entry that names no test is stale (renamed)
        stale = [prefix for prefix, _ in SLOW if not any(item.nodeid.startswith(prefix) for item in items)]
        if stale:
            raise pytest.UsageError(f"tests/conftest.py SLOW names no test: {stale}")
    items.sort(key=lambda item: _first(item.nodeid))  # stable: the rest keep their order


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` with FIRST's groups: one work unit per group, one per other test.
    (pytest-xdist's own xdist_group marker works by rewriting a test's node id, which pytest
    9.2 no longer allows, so every marked test would run wherever it fell.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            number = _first(nodeid)
            return (number < len(FIRST) and FIRST[number][1]) or nodeid

    return Grouped(config, log)
