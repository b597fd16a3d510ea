"""`specd test`: tests for a pipeline, run through the real loop with a scripted agent, no tokens."""
