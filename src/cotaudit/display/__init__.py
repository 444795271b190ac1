"""What the log viewer and the terminal show: text blocks, charts, headlines."""
