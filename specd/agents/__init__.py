"""Agent backends. ``base`` holds the protocol; backends import lazily."""
