"""What every stage stands on: one error type and its one-line refusals, atomic writes, the project's paths, and
the phases a job reports. Imports nothing of the package."""
