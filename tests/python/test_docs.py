"""Runs every ```python block of docs/python.md, in order, in one namespace, in a temporary
directory: the guide's examples must work (they carry their own asserts)."""

import os
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_python_md_examples_run(tmp_path, monkeypatch):
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.S | re.M)
    assert blocks, "no python examples in docs/python.md"
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC.name} example {i + 1}", "exec"), namespace)
    assert os.getcwd() == str(tmp_path)
