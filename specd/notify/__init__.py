"""Telling a person that a task waits for them or failed: the `notify:` block and its targets (apprise, a command)."""
