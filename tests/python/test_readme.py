"""The README's kernel-mode example is documentation users copy: it must run as written."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_python_example_runs_and_checks_its_result():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md lost its Python example"
    snippet = blocks[0]
    assert "assert (dy.numpy() == x + 2.5).all()" in snippet  # the example verifies its own numerics
    result = subprocess.run([sys.executable, "-c", snippet], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
