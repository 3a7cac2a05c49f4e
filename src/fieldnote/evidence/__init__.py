"""The evidence as data: the table registry, what a capture's kernels become (summaries, intervals), the floors and
the sweep tables, bundles and archives, the original project's evidence and the quoted values. Runs no kernel;
imports `core` and `registry`."""
