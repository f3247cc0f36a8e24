"""State you can trust (issue 21): what the screen shows is the table, as a person uses the app.

Edit -> Reset and resize -> Reset bring the original back (values, shape, sidebar note); a table
switch in the sidebar leaves no drop-down holding the old table's tokens (labels and the numbers
beside them); a cell chosen, a value typed and Apply clicked at once (no Enter) applies the typed
value. One server for the module."""
from __future__ import annotations

import pytest
from browser_helpers import require_chromium, wait_until_idle

require_chromium()

SEED004 = {"The": [0.1, -0.05, 0.02, 0.3], "cat": [0.21, -0.43, 0.87, 0.15], "is": [0.05, 0.02, -0.04, 0.22],
           "sleeping": [-0.3, 0.55, 0.4, -0.1], "dog": [0.25, -0.4, 0.8, 0.1]}
SEED003 = {"cat": [0.9, 0.3, -0.2, 0.6], "dog": [0.8, 0.4, -0.1, 0.5]}
SEED003_LABEL = "cat / dog (seed 003)"
# X = E[ids], the first figure of Lookup, as the browser holds it (Plotly decodes typed arrays).
X_JS = """() => { const gd = document.querySelectorAll('.js-plotly-plot')[0];
  return Array.from(gd._fullData[0].z, row => Array.from(row)); }"""


def sidebar(page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def shown_choice(page, label: str) -> str:
    """The text a drop-down shows (its chosen option's label)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True))
    return box.locator('input[role="combobox"]').input_value()


def choose(page, label: str, option: str, where=None) -> None:
    """Open the drop-down labelled `label` and click one of its options, as a person does."""
    scope = where or page.locator('[data-testid="stMain"]')
    box = scope.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True))
    box.scroll_into_view_if_needed()
    box.locator('input[role="combobox"]').click()
    page.get_by_role("option", name=option, exact=True).click()


def x_matrix(page) -> list[list[float]]:
    return page.evaluate(X_JS)


def test_edit_then_reset_brings_the_original_back(server, page):
    page.goto(f"{server}/lookup?table=seed004&text=The+cat")
    wait_until_idle(page, 4)
    assert x_matrix(page)[0] == pytest.approx(SEED004["The"])
    box = page.get_by_label("New value")
    box.fill("0.75")
    page.get_by_role("button", name="Apply edit").click()
    wait_until_idle(page, 4)
    assert x_matrix(page)[0][0] == pytest.approx(0.75)
    assert "This table has your edits" in sidebar(page)
    page.get_by_role("button", name="Reset the table").click()
    wait_until_idle(page, 4)
    assert x_matrix(page)[0] == pytest.approx(SEED004["The"])              # the value is back
    assert "This table has your edits" not in sidebar(page)                # and the sidebar says so
    assert page.get_by_text("Reset: 1 edit dropped; the table is the original 5 × 4 again.").count() == 1
    assert page.get_by_label("New value").get_attribute("placeholder").startswith("now 0.1")


def test_resize_then_reset_brings_the_shape_back(server, page):
    page.goto(f"{server}/lookup?table=seed004&text=The+cat")
    wait_until_idle(page, 4)
    assert "5 × 4" in sidebar(page)
    page.get_by_label("Rows to add").fill("3")                              # typed, no Enter
    page.get_by_role("button", name="Add rows").click()
    wait_until_idle(page, 5)
    assert "8 × 4" in sidebar(page) and "This table has your edits" in sidebar(page)
    added = page.get_by_text("Added 3 rows", exact=False).count()
    page.get_by_role("button", name="Reset the table").click()
    wait_until_idle(page, 4)
    assert "5 × 4" in sidebar(page) and "8 × 4" not in sidebar(page)
    assert "This table has your edits" not in sidebar(page)
    assert added == 1                                        # Add rows said what it did
    assert page.get_by_text("Reset: 3 added rows dropped", exact=False).count() == 1


def switch_table(page, label: str) -> None:
    choose(page, "Embedding table", label, where=page.locator('[data-testid="stSidebar"]'))
    wait_until_idle(page, 0)


def test_a_table_switch_leaves_no_old_choice_on_home(server, page):
    """Presentation mode draws the comparison as an HTML table (st.dataframe is a canvas)."""
    page.goto(f"{server}/?table=seed004&present=1")
    wait_until_idle(page, 0)
    choose(page, "Token", "position 1: cat")
    wait_until_idle(page, 0)
    assert "0.21" in comparison(page)                                       # seed 004's cat
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    switch_table(page, SEED003_LABEL)
    assert shown_choice(page, "Token") == "position 0: cat"                        # seed 003's own text
    assert "0.9" in comparison(page) and "0.21" not in comparison(page)     # and seed 003's cat beside it
    assert "token=0" in page.url and "table=seed003" in page.url


def comparison(page) -> str:
    return page.locator('[data-testid="stTable"]').first.inner_text()


def test_a_table_switch_leaves_no_old_choice_on_lookup(server, page):
    page.goto(f"{server}/lookup?table=seed004&text=The+cat+is")
    wait_until_idle(page, 4)
    choose(page, "Row a", "sleeping (id 10447)")
    wait_until_idle(page, 4)
    choose(page, "Token", "is (id 318)")
    wait_until_idle(page, 4)
    switch_table(page, SEED003_LABEL)
    wait_until_idle(page, 4)
    a, b = shown_choice(page, "Row a"), shown_choice(page, "Row b")
    assert (a, b) == ("cat (id 0)", "dog (id 1)")
    distance = sum((x - y) ** 2 for x, y in zip(SEED003["cat"], SEED003["dog"]))     # 0.04: the rows labelled
    assert page.get_by_text(f"‖E_a − E_b‖² = {distance:.4g}").count() == 1
    assert shown_choice(page, "Token") == "cat (id 0)"
    page.get_by_label("New value").fill("5")                                # an edit goes to the row shown
    page.get_by_role("button", name="Apply edit").click()
    wait_until_idle(page, 4)
    assert x_matrix(page)[0][0] == pytest.approx(5.0)
    assert page.get_by_text("Edit applied: row 0 (cat), coordinate 0: 0.9 → 5.").count() == 1


def test_a_table_switch_leaves_no_old_choice_on_attention(server, page):
    page.goto(f"{server}/attention?table=seed004&text=The+cat+is+sleeping")
    wait_until_idle(page, 4)
    choose(page, "Swap position", "3: sleeping")
    wait_until_idle(page, 4)
    switch_table(page, SEED003_LABEL)
    wait_until_idle(page, 4)
    assert shown_choice(page, "Swap position") == "0: cat"
    assert shown_choice(page, "with position") == "1: dog"


def test_a_value_typed_and_applied_at_once_is_used(server, page):
    """Choose the cell, then at once type the value and click Apply (no Enter, no waiting for the
    rerun the cell change started): the typed value is the one in X (issue 21: it stayed 0.3)."""
    page.goto(f"{server}/lookup?table=seed004&text=The+cat")
    wait_until_idle(page, 4)
    column = page.get_by_role("spinbutton", name="Coordinate", exact=True)
    column.fill("3")
    column.press("Tab")                                      # commits the coordinate: a rerun starts
    page.get_by_label("New value").fill("0.999")
    page.get_by_role("button", name="Apply edit").click()
    wait_until_idle(page, 4)
    X = x_matrix(page)
    assert X[0][3] == pytest.approx(0.999), X
    assert page.get_by_text("Edit applied: row 0 (The), coordinate 3: 0.3 → 0.999.").count() == 1
