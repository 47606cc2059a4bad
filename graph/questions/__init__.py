"""Medical-Diff-VQA questions from the graph: templates, vocabulary mapping, answers, generation, scoring."""
