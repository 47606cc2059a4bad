"""CXRTrek-format staged diagnostic questions: the file format, and gold answers written from the graph."""
