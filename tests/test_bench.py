"""fieldnote.measure.bench refuses a bad command line in one line, before it touches a GPU."""
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.parametrize("argv, says", [
    (["foo", "torch"], "invalid choice: 'foo'"),
    (["layernorm", "torch", "layernorm_warp_row_registerz"],
     "no implementation or hand-written variant of layernorm named"),
    (["layernorm", "torch", "--shape", "rows=4,colz=8"], "--shape for layernorm names rows, cols"),
    (["layernorm", "torch", "--shape", "rows=4,cols"], "--shape takes key=value pairs"),
    (["layernorm", "torch", "--counters"], "--counters needs Nsight Compute"),  # PATH is empty: no ncu
])
def test_a_bad_command_line_is_one_error(argv, says):
    run = subprocess.run([sys.executable, "-m", "fieldnote.measure.bench", *argv], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert says in run.stderr.splitlines()[-1]
