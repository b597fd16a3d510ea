"""One task's loop: cursor, gates, hooks, dispatch, outcome, advance, save.

Executors and the CLI call one seam, ``run_task`` (``specd.engine.seam``), and nothing else of the engine.
"""
