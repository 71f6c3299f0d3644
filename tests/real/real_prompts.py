"""The real-model tests' prompts: a summary (prompt lookup keeps most drafts), a question, raw code."""

SUMMARISE = ("Summarise this paragraph: The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
             "Paris, France. It is named after the engineer Gustave Eiffel, whose company designed and built the "
             "tower from 1887 to 1889.")
CAPITAL = "What is the capital of France?"
RAW = "def fibonacci(n):\n    "
