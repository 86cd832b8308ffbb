"""The one results layer: record schemas, the files they live in, samples, metadata."""
