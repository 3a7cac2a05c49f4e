"""Publishing: the verdicts drawn from the evidence, the note engine and its templates, the figures, the page and
the generated reference. Reads evidence, measures nothing; imports `core`, `registry` and `evidence`."""
