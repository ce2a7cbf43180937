"""Stage 1, C preprocessing: `preprocess(text) -> Preprocessed(text, LineMap, ...)`.

Import from the modules: `analyzer.source.preprocess` (preprocess, preprocess_file,
Preprocessed, Comment) and `analyzer.source.linemap` (LineMap). Nothing is re-exported
here, so `analyzer.source.preprocess` always names the module, never the function.
"""
