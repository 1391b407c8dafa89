"""The recipes that train what the course ships (not installed; run from the repository root)."""
