"""Terminal rendering (rich). The core never imports this package."""
