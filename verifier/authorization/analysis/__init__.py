"""Policy analysis: what a Cedar policy set can never do, always does, or may fail on (issue 44)."""
