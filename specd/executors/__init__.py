"""Executors run many tasks; each calls only the engine's seam (``specd.engine.seam.run_task``)."""
