"""Run state: the engine's durable record of where a task stands."""
