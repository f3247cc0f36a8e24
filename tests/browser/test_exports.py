"""What a presenter shows and saves: the camera button's PNG keeps every left tick label whole,
and presentation mode enlarges select boxes without cutting their text."""
from __future__ import annotations

import pytest
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle

require_chromium()
PROJECTED_PX = 18          # the smallest type presentation mode allows


# The camera button's own call (config toImageButtonOptions: png, scale 2) on the first figure whose
# y ticks read like "4: sleeping (id 5777)"; the PNG is decoded on a canvas and, over the rows of the
# plot area (the title is above them), the dark pixels of each of the first columns are counted.
EXPORT_COLUMNS_JS = """async (columns) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => [...g.querySelectorAll('.ytick text')].some(t => t.textContent.includes('(id ')));
  if (!gd) return null;
  const scale = 2, size = gd._fullLayout._size;
  const image = new Image();
  image.src = await Plotly.toImage(gd, {format: 'png', scale});
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, image.width, image.height).data;
  const dark = [];
  for (let x = 0; x < columns; x++) {
    let count = 0;
    for (let y = Math.round(size.t * scale); y < Math.round((size.t + size.h) * scale); y++) {
      const i = 4 * (y * image.width + x);
      if (pixels[i + 3] > 0 && (pixels[i] + pixels[i + 1] + pixels[i + 2]) / 3 < 200) count++;
    }
    dark.push(count);
  }
  return {dark, plotLeft: Math.round(size.l * scale), ticks: [...gd.querySelectorAll('.ytick text')].map(t => t.textContent)};
}"""


@pytest.mark.parametrize("present", ["", "&present=1"])
def test_png_export_keeps_long_left_labels_whole(server, page, present):
    page.goto(f"{server}/lookup?table=minilm{present}")
    wait_until_idle(page, 4)
    export = page.evaluate(EXPORT_COLUMNS_JS, 400)
    assert export is not None, "no figure with token labels on the lookup page"
    label_columns = export["dark"][:export["plotLeft"]]
    assert sum(label_columns) > 0, ("no label pixels left of the plot", export["ticks"])
    assert export["dark"][:4] == [0] * 4, ("a tick label is cut at the image's left edge", export["dark"][:16],
                                           export["ticks"])


# Every select box of the page: the size of the value shown and whether its box still holds it.
SELECT_BOXES_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stSelectbox"]')].map(box => {
  const input = box.querySelector('input[role="combobox"]'), style = getComputedStyle(input);
  const frame = input.closest('[role="group"]').getBoundingClientRect(), field = input.getBoundingClientRect();
  const content = input.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  return {value: input.value, font: parseFloat(style.fontSize), line: parseFloat(style.lineHeight), content,
          inside: field.top >= frame.top - 0.5 && field.bottom <= frame.bottom + 0.5}; })"""
# The options of the open drop-down: size and whether each option's text box holds its text.
OPTIONS_JS = """() => [...document.querySelectorAll('[role="listbox"] [role="option"]')].map(option => {
  const text = [...option.querySelectorAll('*')].find(e => e.childElementCount === 0 && e.textContent.trim()) || option;
  const holder = option.firstElementChild || option;
  return {text: option.textContent, font: parseFloat(getComputedStyle(text).fontSize),
          cut: holder.scrollHeight > holder.clientHeight + 1}; })"""


def test_select_boxes_are_enlarged_when_presenting(server, page):
    page.goto(f"{server}/lookup?table=minilm&present=1")
    wait_until_idle(page, 4)
    boxes = page.evaluate(SELECT_BOXES_JS)
    assert boxes, "no select box on the lookup page"
    for box in boxes:
        assert box["font"] >= PROJECTED_PX, box
        assert box["inside"] and box["content"] >= box["line"] - 0.5, ("the value is cut", box)
    select = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first
    select.scroll_into_view_if_needed()
    select.locator('input[role="combobox"]').click()
    page.wait_for_selector('[role="listbox"] [role="option"]')
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "presentation-select-open.png"))
    options = page.evaluate(OPTIONS_JS)
    assert options, "the drop-down shows no options"
    for option in options:
        assert option["font"] >= PROJECTED_PX and not option["cut"], option
