"""Task folders, their phases and derived position, the project, status and its index."""
