from __future__ import annotations

from specd.cli import main

main()
