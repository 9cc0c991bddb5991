"""The Python examples of docs/python.md run as they are written."""
import os
import re

import pytest

pytest.importorskip("cgsolve")
pytest.importorskip("netsolve")

SOURCE = os.environ.get("CGSOLVE_SOURCE_DIR", ".")
with open(os.path.join(SOURCE, "docs", "python.md")) as f:
    EXAMPLES = re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_the_page_has_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_example_runs(number, monkeypatch):
    monkeypatch.setenv("CGSOLVE_SOURCE_DIR", os.path.abspath(SOURCE))
    exec(compile(EXAMPLES[number], f"docs/python.md example {number + 1}", "exec"), {})
