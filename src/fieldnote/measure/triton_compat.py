"""Triton's interpreter across the versions we support (3.6 to 3.9), for the CPU checks."""
from __future__ import annotations

import inspect


def fix_interpreter_scalar_index() -> None:
    """Let `range(0, K, BLOCK)` over a scalar kernel argument run in Triton 3.6's interpreter.

    The interpreter holds a scalar argument as a one-element array and its `tensor.__index__` calls `int()` on
    it, which NumPy >= 2.4 refuses for arrays that are not 0-d. Triton 3.9 squeezes the array first; this
    applies the same fix where the installed interpreter lacks it, leaving newer versions untouched.
    """
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor
    if "squeeze" in inspect.getsource(original) or getattr(original, "fieldnote_fixed", False):
        return

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patched.fieldnote_fixed = True
    interpreter._patch_lang_tensor = patched
