"""Reading results: compare and its statistics, explain."""
