"""What specd asks of the operating system: the jail its children run in, and making sure none outlives it."""
