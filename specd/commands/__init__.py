"""One module per command: parse, call the core, render. Click lives only here and in cli.py."""
