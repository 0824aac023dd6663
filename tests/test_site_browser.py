"""The built site in a real browser: Debian's chromium, headless, driven by Playwright.

Screenshots of every page type, desktop and phone, go to site/build/screenshots/ (ignored;
KB_SCREENSHOTS=DIR puts them elsewhere) for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

import kb
from site_build import ROOT, built_site

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = Path(os.environ.get("KB_SCREENSHOTS") or ROOT / "site/build/screenshots")
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def server():
    html = built_site() / "html"
    handler = functools.partial(_QuietHandler, directory=str(html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.errors, page.foreign = [], []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith((server, "data:", "blob:")) else page.foreign.append(r.url))
    yield page
    context.close()


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def _form_ready(page) -> None:
    """Wait until stack-ui.js has read api/v1/all.json and taken over the form: it fills the
    versions list and adds its submit handler in one step. (The framework options are in the
    page itself, so they are there before the script is; a click before the handler is a plain
    form submit to stack.html, which a loaded machine shows.)"""
    page.locator("#kb-versions option").first.wait_for(state="attached")


def test_home_loads_offline_without_errors(page, server) -> None:
    page.goto(f"{server}/index.html")
    page.wait_for_load_state("networkidle")
    assert "Determinism knowledge base" in page.title()
    assert page.locator("#kb-stack").is_visible() and page.locator(".kb-recipe-block").count() >= 3
    _shot(page, "home")
    assert page.errors == []
    assert page.foreign == []


def test_search_reaches_bias_add_page(page, server) -> None:
    page.goto(f"{server}/index.html")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator("input.md-search__input").press_sequentially("bias_add", delay=30)  # material listens to keys
    result = page.locator(".md-search-result__link", has_text="bias_add").first
    result.wait_for(timeout=10000)
    _shot(page, "search")
    result.click()
    page.wait_for_load_state()
    assert "bias-add" in page.url or "bias_add" in page.url
    assert "bias_add" in page.locator("h1").first.inner_text()


def test_tensorflow_matrix_shows_tdp_for_bias_add_at_115(page, server) -> None:
    page.goto(f"{server}/frameworks/tensorflow.html")
    table = page.locator("table.kb-matrix").first
    headers = table.locator("thead th").all_inner_texts()
    assert headers[1].endswith("2.21")  # newest first
    assert any(h.startswith("2.10–") for h in headers[1:4])  # identical releases merged into one column
    column = next(i for i, h in enumerate(headers) if h == "1.14–1.15")
    row = table.locator("tbody tr", has=page.locator('a[href$="tf.bias-add-backprop.html"]'))
    cell = row.locator("td").nth(column - 1)
    assert cell.locator("a.kb-c").inner_text().strip() == "TDP"
    _shot(page, "matrix-tensorflow")
    assert page.errors == []


def test_matrix_width_fits_and_header_sticks(page, server) -> None:
    """Before: TensorFlow's matrix was 3,193 px wide and PyTorch's 6,675 px; the header scrolled away."""
    widths = {}
    for fw in ("tensorflow", "pytorch"):
        page.goto(f"{server}/frameworks/{fw}.html")
        widths[fw] = page.evaluate("document.querySelector('table.kb-matrix').scrollWidth")
    assert widths["tensorflow"] <= 1400 and widths["pytorch"] <= 2200, widths
    wrap = page.locator(".kb-matrix-wrap").first
    header = page.locator("table.kb-matrix thead th").nth(1)
    wrap.evaluate("w => { w.scrollTop = 600; }")
    page.wait_for_timeout(100)
    assert wrap.evaluate("w => w.scrollTop") >= 500  # the rows scrolled under it...
    assert abs(header.bounding_box()["y"] - wrap.bounding_box()["y"]) < 3  # ...and the header row stuck on top
    first = page.locator("table.kb-matrix tbody th").first
    left = first.bounding_box()["x"]
    wrap.evaluate("w => { w.scrollLeft = 400; }")
    page.wait_for_timeout(100)
    assert abs(first.bounding_box()["x"] - left) < 2  # so does the first column


def test_matrix_keyboard_navigation_shows_details(page, server) -> None:
    page.goto(f"{server}/frameworks/tensorflow.html")
    table = page.locator("table.kb-matrix").first
    cells = table.locator("td.kb-cell > a.kb-c")
    assert cells.nth(0).get_attribute("tabindex") == "0" and cells.nth(1).get_attribute("tabindex") == "-1"
    cells.nth(0).focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # back onto the matrix's one tab stop, from the keyboard
    tip = table.locator("td.kb-cell").nth(0).locator(".kb-tip")
    assert tip.is_visible() and "deterministic" in tip.inner_text()
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.getAttribute('aria-describedby')")
    assert focused == table.locator("td.kb-cell").nth(1).locator("a.kb-c").get_attribute("aria-describedby")
    assert table.locator("td.kb-cell").nth(1).locator(".kb-tip").is_visible()
    page.keyboard.press("ArrowDown")
    row2 = table.locator("tbody tr").nth(1).locator("td.kb-cell").nth(1).locator("a.kb-c")
    assert page.evaluate("document.activeElement.getAttribute('aria-describedby')") == row2.get_attribute("aria-describedby")
    _shot(page, "matrix-keyboard")
    href = row2.get_attribute("href")
    page.keyboard.press("Enter")
    page.wait_for_url("**" + href.replace("../", "/"), timeout=10000)  # Enter opens the range's explanation
    assert page.errors == []


def test_matrix_click_or_tap_shows_details_then_opens(browser, server) -> None:
    for viewport in ({"width": 1400, "height": 1000}, PHONE):
        context = browser.new_context(viewport=viewport, has_touch=viewport is PHONE, is_mobile=viewport is PHONE)
        page = context.new_page()
        page.goto(f"{server}/frameworks/pytorch.html")
        cell = page.locator("table.kb-matrix td.kb-cell").nth(3)
        link = cell.locator("a.kb-c")
        (link.tap if viewport is PHONE else link.click)()
        assert cell.locator(".kb-tip").is_visible() and "/frameworks/pytorch.html" in page.url  # details, no jump
        if viewport is PHONE:
            _shot(page, "matrix-pytorch-phone-tap")
        (link.tap if viewport is PHONE else link.click)()
        page.wait_for_url("**/sources/**", timeout=10000)
        context.close()


def test_source_page_lists_references(page, server) -> None:
    page.goto(f"{server}/sources/tf.bias-add-backprop.html")
    refs = page.locator("ul.kb-references li")
    assert refs.count() >= 2
    assert "tensorflow/tensorflow#" in " ".join(refs.all_inner_texts())
    _shot(page, "source")


def test_nightly_report_page_renders(page, server) -> None:
    page.goto(f"{server}/nightly.html")
    assert page.locator("h1").first.inner_text().startswith("Nightly report")
    assert page.locator(".admonition-title", has_text="No nightly report yet").is_visible()  # the test copy has none
    assert page.errors == []


def test_check_my_stack_tf_23_gives_kb_recipe(page, server) -> None:
    page.goto(f"{server}/stack.html")
    page.locator("#kb-framework option[value=tensorflow]").wait_for(state="attached")
    _form_ready(page)
    page.select_option("#kb-framework", "tensorflow")
    page.fill("#kb-version", "2.3")
    page.click("#kb-go")
    recipe = page.locator("#kb-result ol.kb-recipe > li > a").all_inner_texts()
    from kb.site import model
    from kb import query

    assert recipe == model.stack(query.index(), "tensorflow", "2.3")["recipe"]
    assert "random.seed(SEED)" in page.locator("#kb-result pre.kb-copy").first.inner_text()
    assert page.url.endswith("stack.html?fw=tensorflow&v=2.3")  # the answer's permalink
    _shot(page, "stack-tf-2.3")
    page.fill("#kb-op", "tf.nn.bias_add")
    page.click("#kb-go")
    page.locator("#kb-result .kb-verdict").wait_for()
    expected = kb.status("tf.nn.bias_add", "2.3")
    assert page.locator("#kb-result ol.kb-recipe > li > a").all_inner_texts() == list(expected.recipe)
    assert "not deterministic. Fixed by TDO." in page.locator("#kb-result .kb-verdict").inner_text()
    assert page.errors == []


def test_home_lookup_short_name_suggests_never_all_clear(page, server) -> None:
    page.goto(f"{server}/index.html")
    page.locator("#kb-framework option[value=tensorflow]").wait_for(state="attached")
    _form_ready(page)
    page.fill("#kb-version", "2.15")
    page.fill("#kb-op", "bias_add")
    page.click("#kb-go")
    verdict = page.locator("#kb-result .kb-verdict")
    verdict.wait_for(timeout=20000)
    text = page.locator("#kb-result").inner_text()
    assert "no known source" not in text and "not a TensorFlow name" in verdict.inner_text()
    suggestions = page.locator("#kb-result a.kb-suggestion").all_inner_texts()
    assert suggestions[0] == "tf.nn.bias_add"
    assert "/index.html" in page.url  # answered inline on the home page
    _shot(page, "home-lookup-bias_add")
    page.locator("#kb-result a.kb-suggestion").first.click()
    page.locator("#kb-result .kb-verdict-fix").wait_for(timeout=20000)
    assert "tf.nn.bias_add on TensorFlow 2.15: not deterministic. Fixed by EOD." in page.locator("#kb-result").inner_text()
    for fw, op in (("pytorch", "index_add"), ("pytorch", "scatter_add")):
        page.select_option("#kb-framework", fw)
        page.fill("#kb-version", "2.11")
        page.fill("#kb-op", op)
        page.click("#kb-go")
        page.locator("#kb-result a.kb-suggestion").first.wait_for(timeout=20000)
        assert "no known source" not in page.locator("#kb-result").inner_text()
    assert page.errors == []


def test_permalink_answers_on_load(page, server) -> None:
    page.goto(f"{server}/stack.html?fw=pytorch&v=2.11&op=torch.Tensor.index_add_")
    verdict = page.locator("#kb-result .kb-verdict")
    verdict.wait_for(timeout=20000)
    expected = kb.status("torch.Tensor.index_add_", "2.11")
    assert "not deterministic. Fixed by " + " + ".join(expected.recipe) + "." in verdict.inner_text()
    assert page.input_value("#kb-framework") == "pytorch" and page.input_value("#kb-version") == "2.11"
    link = page.locator("#kb-result .kb-permalink a")
    assert link.get_attribute("href") == "stack.html?fw=pytorch&v=2.11&op=torch.Tensor.index_add_"
    _shot(page, "stack-permalink-index_add")
    page.goto(f"{server}/stack.html?fw=pytorch&v=2.11&op=torch.nn.functional.interpolate&call=mode%3Dnearest")
    page.locator("#kb-result .kb-verdict").wait_for(timeout=20000)
    assert page.input_value("#kb-call") == "mode=nearest"
    assert page.errors == []


@pytest.mark.parametrize("query,words", [("fw=__proto__&v=2.1&op=tf.add", "the framework"),
                                         ("fw=pytorch&v=2.11&op=torch.add&device=tpu%3Cb%3E", "the device"),
                                         ("fw=tensorflow&v=2.1&op=tf.add&dist=constructor", "the distribution")])
def test_r4_l15_a_permalink_value_the_form_does_not_offer_is_refused(page, server, query: str, words: str) -> None:
    """`?fw=__proto__` fell back to TensorFlow without a word; `?device=junk` answered for "()"."""
    page.goto(f"{server}/stack.html?{query}")
    refused = page.locator("#kb-result .kb-refused")
    refused.wait_for(timeout=20000)
    assert words in refused.inner_text() and "Not answered" in refused.inner_text()
    assert page.locator("#kb-result .kb-verdict").count() == 0
    assert page.errors == []


def test_phone_first_screen_is_the_lookup(browser, server) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/index.html")
    page.wait_for_load_state("networkidle")
    button = page.locator("#kb-go").bounding_box()
    assert button["y"] + button["height"] <= PHONE["height"]  # the whole form is on the first screen
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways scrolling
    title = page.locator(".md-header__topic").first.locator(".md-ellipsis")
    assert title.inner_text().strip() == "Determinism knowledge base"
    assert title.evaluate("e => e.scrollWidth <= e.clientWidth")  # the site name is not cut on a phone
    _shot(page, "home-phone")
    page.fill("#kb-version", "2.11")
    page.select_option("#kb-framework", "pytorch")
    page.fill("#kb-version", "2.11")
    page.locator("#kb-go").tap()
    page.locator("#kb-result .kb-verdict").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    _shot(page, "home-phone-answer")
    page.goto(f"{server}/frameworks/tensorflow.html")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # the matrix scrolls in its box
    _shot(page, "matrix-tensorflow-phone")
    assert errors == []
    context.close()


PAGE_TYPES = {
    "home": "index.html", "stack": "stack.html?fw=tensorflow&v=2.21", "framework": "frameworks/pytorch.html",
    "source": "sources/torch.index-add.html", "sources": "sources/index.html", "solutions": "solutions.html",
    "links": "links.html", "verification": "verification.html", "nightly": "nightly.html", "json-api": "json-api.html",
    "guide": "guide/probe.html", "not-found": "404.html",
}


@pytest.mark.parametrize("kind", sorted(PAGE_TYPES))
def test_screenshot_of_each_page_type(browser, server, kind) -> None:
    for name, viewport in (("desktop", {"width": 1400, "height": 1000}), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "404" not in m.text else None)
        page.goto(f"{server}/{PAGE_TYPES[kind]}")
        page.wait_for_load_state("networkidle")
        assert page.locator("h1").count() >= 1
        _shot(page, f"page-{kind}-{name}")
        assert (SHOTS / f"page-{kind}-{name}.png").stat().st_size > 5000
        assert errors == [], errors
        context.close()


def test_dark_mode_toggles(page, server) -> None:
    page.goto(f"{server}/frameworks/tensorflow.html")
    before = page.locator("body").get_attribute("data-md-color-scheme")
    page.locator("form[data-md-component=palette] label:visible").first.click()
    after = page.locator("body").get_attribute("data-md-color-scheme")
    assert {before, after} == {"default", "slate"}
    _shot(page, "matrix-dark")


def test_home_lookup_works_opened_from_disk(browser) -> None:
    """The README's main command prints site/build/html/index.html: opened as a file, the form
    answers (data from the api/v1/*.js twins: fetch() cannot read file:// pages' neighbours)."""
    html = built_site() / "html"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    failed: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: failed.append(r.url))
    try:
        page.goto((html / "index.html").as_uri())
        _form_ready(page)
        page.fill("#kb-version", "2.15")
        page.fill("#kb-op", "tf.nn.bias_add")
        page.click("#kb-go")
        page.locator("#kb-result .kb-verdict-fix").wait_for(timeout=20000)
        text = page.locator("#kb-result").inner_text()
        assert "fixed by EOD" in text and "Could not load" not in text
        page.fill("#kb-op", "bias_ad")  # an unknown name reads the names list (names/tensorflow.js)
        page.click("#kb-go")
        page.locator("#kb-result a.kb-suggestion").first.wait_for(timeout=20000)
        # only the theme's full-text search needs HTTP (its worker cannot start from file://)
        assert [e for e in errors if "search" not in e] == [], errors
        assert [u for u in failed if "/search/" not in u] == [], failed
    finally:
        context.close()
